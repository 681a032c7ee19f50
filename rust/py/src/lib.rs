//! `ferrograd._C`: PyO3 bindings. Argument conversion, GIL release and
//! error mapping only; all math lives in `ferrograd-core`.

mod autograd;
mod convert;
mod dtype;
mod errors;
mod factories;
mod function;
mod gil;
mod graph;
mod hooks;
mod memory_format;
mod node;
mod ops;
mod ops_complex;
mod ops_conv;
mod ops_decomp;
mod ops_fft;
mod ops_index;
mod ops_inplace;
mod ops_linalg;
mod ops_math;
mod optim;
mod tensor;
mod threads;

use pyo3::prelude::*;

#[pymodule(name = "_C")]
fn ferrograd_c(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<node::PyNode>()?;
    m.add_class::<dtype::PyDType>()?;
    m.add_class::<tensor::StorageRef>()?;
    m.add_class::<hooks::HookHandle>()?;
    dtype::register(m)?;
    memory_format::register(m)?;
    autograd::register(m)?;
    factories::register(m)?;
    function::register(m)?;
    graph::register(m)?;
    ops::register(m)?;
    ops_complex::register(m)?;
    ops_conv::register(m)?;
    ops_decomp::register(m)?;
    ops_fft::register(m)?;
    ops_linalg::register(m)?;
    ops_index::register(m)?;
    ops_math::register(m)?;
    optim::register(m)?;
    threads::register(m)?;
    Ok(())
}
