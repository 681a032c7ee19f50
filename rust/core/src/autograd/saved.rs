//! Tensors saved for backward, checked against their version counter when
//! unpacked so that an in-place change never yields a wrong gradient.

use super::node::BackwardCtx;
use crate::tensor::Tensor;
use crate::{bail, Result};

#[derive(Clone)]
pub struct SavedTensor {
    tensor: Tensor,
    saved_version: u64,
    /// Saved outputs are stored without their `grad_fn` (it is the node that
    /// saves them: keeping it would make a reference cycle) and re-attached
    /// to that node when unpacked for a differentiable backward.
    output_nr: Option<u32>,
}

impl SavedTensor {
    /// Saves an input of the op.
    pub fn input(t: &Tensor) -> SavedTensor {
        SavedTensor {
            tensor: t.clone(),
            saved_version: t.version(),
            output_nr: None,
        }
    }

    /// Saves output `output_nr` of the op itself.
    pub fn output(t: &Tensor, output_nr: u32) -> SavedTensor {
        SavedTensor {
            tensor: t.detach(),
            saved_version: t.version(),
            output_nr: Some(output_nr),
        }
    }

    pub fn unpack(&self, ctx: &BackwardCtx<'_>) -> Result<Tensor> {
        let current = self.tensor.version();
        if current != self.saved_version {
            let producer = match self.output_nr {
                Some(nr) => Some((ctx.node.name().to_string(), nr)),
                None => self
                    .tensor
                    .grad_fn()
                    .map(|f| (f.name().to_string(), self.tensor.output_nr())),
            };
            let which = match producer {
                Some((name, nr)) => format!(", which is output {nr} of {name},"),
                None => String::new(),
            };
            bail!(
                Runtime,
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{}]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with ferrograd.autograd.set_detect_anomaly(True).",
                self.tensor.type_description(),
                which,
                current,
                self.saved_version
            );
        }
        match self.output_nr {
            Some(nr) if ctx.create_graph => Ok(self.tensor.with_grad_fn(ctx.node.clone(), nr)),
            _ => Ok(self.tensor.clone()),
        }
    }
}
