//! `ferrograd.channels_last` and the other memory formats.

use ferrograd_core::tensor::MemoryFormat;
use pyo3::prelude::*;

/// `torch.memory_format`: how a tensor's dims are ordered in memory.
#[pyclass(name = "memory_format", module = "ferrograd", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyMemoryFormat(pub MemoryFormat);

/// The format's PyTorch name, which is also its module attribute.
fn name(format: MemoryFormat) -> &'static str {
    match format {
        MemoryFormat::Contiguous => "contiguous_format",
        MemoryFormat::ChannelsLast => "channels_last",
        MemoryFormat::ChannelsLast3d => "channels_last_3d",
        MemoryFormat::Preserve => "preserve_format",
    }
}

#[pymethods]
impl PyMemoryFormat {
    fn __repr__(&self) -> String {
        format!("ferrograd.{}", name(self.0))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMemoryFormat>()?;
    for format in [
        MemoryFormat::Contiguous,
        MemoryFormat::ChannelsLast,
        MemoryFormat::ChannelsLast3d,
        MemoryFormat::Preserve,
    ] {
        m.add(name(format), PyMemoryFormat(format))?;
    }
    Ok(())
}
