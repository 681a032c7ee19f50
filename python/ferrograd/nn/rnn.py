"""torch.nn recurrent layers: RNNCell, LSTMCell, GRUCell, RNN, LSTM and GRU.

Each layer and direction projects the inputs of every time step with one matmul, then
loops over time for the hidden projection; everything is composed of differentiable
tensor ops, so gradients flow through the whole sequence.

RNN, LSTM and GRU also take a :class:`~ferrograd.nn.utils.rnn.PackedSequence`: at each step only
the sequences still running advance, and a PackedSequence comes out with each sequence's final
state taken at its own last step.

Relies on: F.linear, Tensor.unbind / chunk / sigmoid / tanh / relu / unsqueeze /
squeeze / transpose / t(), ferrograd.stack / cat / zeros, and F.dropout.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import ferrograd

from . import functional as F
from . import init
from .modules import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]


# ---- one step of each cell ----------------------------------------------------------------
# ``gi`` is the input projection x W_ih^T + b_ih of the step, ``w_hh_t`` is W_hh^T.


def _rnn_step(gi, h, w_hh_t, b_hh, relu: bool):
    pre = gi + h.matmul(w_hh_t)
    if b_hh is not None:
        pre = pre + b_hh
    return pre.relu() if relu else pre.tanh()


def _lstm_step(gi, h, c, w_hh_t, b_hh, w_hr_t):
    gates = gi + h.matmul(w_hh_t)
    if b_hh is not None:
        gates = gates + b_hh
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr_t is not None:
        h = h.matmul(w_hr_t)
    return h, c


def _gru_step(gi, h, w_hh_t, b_hh):
    gh = h.matmul(w_hh_t)
    if b_hh is not None:
        gh = gh + b_hh
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n)


# ---- cells --------------------------------------------------------------------------------


class RNNCellBase(Module):
    def __init__(
        self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ferrograd.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(ferrograd.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ferrograd.empty((num_chunks * hidden_size,), dtype=dtype))
            self.bias_hh = Parameter(ferrograd.empty((num_chunks * hidden_size,), dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input, hiddens: list, labels: list[str]):
        """Checks dimensions and sizes as torch does; returns the batched input and hiddens."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for h, label in zip(hiddens, labels):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}"
            )
        out = []
        for k, h in enumerate(hiddens):
            if h is None:
                h = ferrograd.zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
            elif not is_batched:
                h = h.unsqueeze(0)
            suffix = str(k)
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{suffix} batch size {h.shape[0]}"
                )
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{suffix} has inconsistent hidden_size: got {h.shape[1]}, expected {self.hidden_size}"
                )
            out.append(h)
        return is_batched, input, out


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: ferrograd.Tensor, hx: ferrograd.Tensor | None = None) -> ferrograd.Tensor:
        is_batched, input, (hx,) = self._prepare("RNNCell", input, [hx], ["hidden"])
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _rnn_step(gi, hx, self.weight_hh.t(), self.bias_hh, self.nonlinearity == "relu")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step with gates (i, f, g, o); returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(
        self, input: ferrograd.Tensor, hx: tuple | None = None
    ) -> tuple[ferrograd.Tensor, ferrograd.Tensor]:
        hs = [None, None] if hx is None else list(hx)
        is_batched, input, (h, c) = self._prepare("LSTMCell", input, hs, ["hx[0]", "hx[1]"])
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(gi, h, c, self.weight_hh.t(), self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step with gates (r, z, n)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: ferrograd.Tensor, hx: ferrograd.Tensor | None = None) -> ferrograd.Tensor:
        is_batched, input, (hx,) = self._prepare("GRUCell", input, [hx], ["hidden"])
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _gru_step(gi, hx, self.weight_hh.t(), self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


# ---- multi-layer, optionally bidirectional sequence layers -----------------------------------


class RNNBase(Module):
    """Shared parameters, checks and time loop of RNN, LSTM and GRU."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = (
            float(dropout)
            if isinstance(dropout, numbers.Number) and not isinstance(dropout, bool)
            else dropout
        )
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [
                    (f"weight_ih_l{layer}{suffix}", (gate_size, layer_input_size)),
                    (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden_size)),
                ]
                if bias:
                    params += [
                        (f"bias_ih_l{layer}{suffix}", (gate_size,)),
                        (f"bias_hh_l{layer}{suffix}", (gate_size,)),
                    ]
                if proj_size > 0:
                    params.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in params:
                    setattr(self, name, Parameter(ferrograd.empty(shape, dtype=dtype)))
                self._flat_weights_names.extend(name for name, _ in params)
                self._all_weights.append([name for name, _ in params])
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Kept for API compatibility; parameters are always used as they are."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- checks -----------------------------------------------------------------------

    def _check_input(self, input: ferrograd.Tensor) -> None:
        if not input.is_floating_point():
            raise ValueError(f"input must have the type {self.weight_ih_l0.dtype}, got type {input.dtype}")
        if input.dtype != self.weight_ih_l0.dtype:
            raise ValueError(f"input must have the type {self.weight_ih_l0.dtype}, got type {input.dtype}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[-1]}"
            )

    def _expected_hidden_size(self, input: ferrograd.Tensor, size: int) -> tuple[int, int, int]:
        mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    @staticmethod
    def _check_hidden_size(hx: ferrograd.Tensor, expected: tuple[int, ...], what: str = "hidden") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    # ---- the time loop --------------------------------------------------------------

    def _layer_params(self, layer: int, direction: int):
        suffix = "_reverse" if direction == 1 else ""
        w_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        w_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
        b_ih = getattr(self, f"bias_ih_l{layer}{suffix}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{layer}{suffix}") if self.bias else None
        w_hr = getattr(self, f"weight_hr_l{layer}{suffix}") if self.proj_size > 0 else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def _step(self, g, h, c, w_hh_t, b_hh, w_hr_t):
        """One time step of this cell type from the projected input ``g``: the new ``(h, c)``
        (``c`` passed through unchanged unless the mode is LSTM)."""
        if self.mode == "LSTM":
            return _lstm_step(g, h, c, w_hh_t, b_hh, w_hr_t)
        if self.mode == "GRU":
            return _gru_step(g, h, w_hh_t, b_hh), c
        return _rnn_step(g, h, w_hh_t, b_hh, self.mode == "RNN_RELU"), c

    def _layers(self, x, h0, c0, run_direction):
        """The loop over layers and directions shared by :meth:`_run` and :meth:`_run_packed`.

        ``run_direction(gi, step, h, c, reverse)`` runs one direction of a layer over ``gi``, its
        inputs projected by one matmul, from the initial states ``h``/``c``, with ``step(g, h, c)``
        advancing them one time step; it returns that direction's output and final states.
        Returns the last layer's output and the final states stacked over layers and directions."""
        num_directions = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            outputs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                idx = layer * num_directions + direction
                step = functools.partial(
                    self._step, w_hh_t=w_hh.t(), b_hh=b_hh, w_hr_t=w_hr.t() if w_hr is not None else None
                )
                c_init = c0[idx] if c0 is not None else None
                out, h, c = run_direction(F.linear(x, w_ih, b_ih), step, h0[idx], c_init, direction == 1)
                outputs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outputs[0] if num_directions == 1 else ferrograd.cat(outputs, -1)
        h_n = ferrograd.stack(h_n, 0)
        c_n = ferrograd.stack(c_n, 0) if c0 is not None else None
        return x, h_n, c_n

    def _run(self, x: ferrograd.Tensor, h0: ferrograd.Tensor, c0: ferrograd.Tensor | None):
        """``x``: (L, N, input_size) time-major; ``h0``/``c0``: (layers * dirs, N, size).

        Returns the last layer's output (L, N, dirs * H_out) and the final states."""
        seq_len = x.shape[0]

        def run_direction(gi, step, h, c, reverse):
            gis = gi.unbind(0)
            outs = [None] * seq_len
            for t in range(seq_len - 1, -1, -1) if reverse else range(seq_len):
                h, c = step(gis[t], h, c)
                outs[t] = h
            if seq_len == 0:
                return ferrograd.zeros((0, gi.shape[1], h.shape[-1]), dtype=gi.dtype), h, c
            return ferrograd.stack(outs, 0), h, c

        return self._layers(x, h0, c0, run_direction)

    def _run_packed(self, data, batch_sizes: list[int], h0, c0):
        """Like :meth:`_run` for packed ``data`` (sum(batch_sizes), input_size): at step ``t`` only the
        first ``batch_sizes[t]`` sequences advance, so each final state is the one at the end of
        its sequence. Returns the packed output and the final states."""
        offsets = [0]
        for bs in batch_sizes:
            offsets.append(offsets[-1] + bs)

        def run_direction(gi, step, h_init, c_init, reverse):
            outs = [None] * len(batch_sizes)
            done_h, done_c = [], []
            if not reverse:
                # sequences drop out of the batch (from the end) as they finish
                h = h_init[: batch_sizes[0]]
                c = c_init[: batch_sizes[0]] if c_init is not None else None
                steps = range(len(batch_sizes))
            else:
                # backwards, sequences join the batch at their last step with their initial state
                h = h_init[:0]
                c = c_init[:0] if c_init is not None else None
                steps = range(len(batch_sizes) - 1, -1, -1)
            for t in steps:
                bs = batch_sizes[t]
                if h.shape[0] > bs:
                    done_h.append(h[bs:])
                    h = h[:bs]
                    if c is not None:
                        done_c.append(c[bs:])
                        c = c[:bs]
                elif h.shape[0] < bs:
                    h = ferrograd.cat([h, h_init[h.shape[0] : bs]])
                    if c is not None:
                        c = ferrograd.cat([c, c_init[c.shape[0] : bs]])
                h, c = step(gi[offsets[t] : offsets[t + 1]], h, c)
                outs[t] = h
            if not reverse:
                # finished groups were split off from the end: reverse to restore batch order
                h = ferrograd.cat([h, *reversed(done_h)])
                c = ferrograd.cat([c, *reversed(done_c)]) if c is not None else None
            return ferrograd.cat(outs, 0), h, c

        return self._layers(data, h0, c0, run_direction)

    def _forward_packed(self, input: PackedSequence, hx, lstm: bool):
        data, batch_sizes, sorted_indices, unsorted_indices = input
        batch_sizes_list = batch_sizes.tolist()
        max_batch_size = batch_sizes_list[0]
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hs = [
                ferrograd.zeros(
                    (self.num_layers * num_directions, max_batch_size, real_hidden_size), dtype=data.dtype
                )
            ]
            if lstm:
                hs.append(
                    ferrograd.zeros(
                        (self.num_layers * num_directions, max_batch_size, self.hidden_size), dtype=data.dtype
                    )
                )
        else:
            hs = list(hx) if lstm else [hx]
            if sorted_indices is not None:
                # hidden states are given in the caller's batch order
                hs = [h.index_select(1, sorted_indices) for h in hs]
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        self._check_input(data)
        expected = (self.num_layers * num_directions, max_batch_size)
        if lstm:
            self._check_hidden_size(hs[0], (*expected, real_hidden_size), "hidden[0]")
            self._check_hidden_size(hs[1], (*expected, self.hidden_size), "hidden[1]")
        else:
            self._check_hidden_size(hs[0], (*expected, self.hidden_size))
        out, h_n, c_n = self._run_packed(data, batch_sizes_list, hs[0], hs[1] if lstm else None)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n.index_select(1, unsorted_indices) if c_n is not None else None
        output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return output, ((h_n, c_n) if lstm else h_n)

    def _forward(self, name: str, input: ferrograd.Tensor, hx, lstm: bool):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, lstm)
        if input.dim() not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            hs = list(hx) if lstm else [hx]
            want = 3 if is_batched else 2
            if any(h.dim() != want for h in hs):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                if lstm:
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D but got "
                        f"({hs[0].dim()}-D, {hs[1].dim()}-D) tensors"
                    )
                raise RuntimeError(
                    f"For {kind} input, hx should also be {want}-D but got {hs[0].dim()}-D tensor"
                )
            if not is_batched:
                hs = [h.unsqueeze(1) for h in hs]
        else:
            batch = input.shape[batch_dim]
            shape_h = (self.num_layers * num_directions, batch, real_hidden_size)
            shape_c = (self.num_layers * num_directions, batch, self.hidden_size)
            hs = [ferrograd.zeros(shape_h, dtype=input.dtype)]
            if lstm:
                hs.append(ferrograd.zeros(shape_c, dtype=input.dtype))
        self._check_input(input)
        if lstm:
            self._check_hidden_size(hs[0], self._expected_hidden_size(input, real_hidden_size), "hidden[0]")
            self._check_hidden_size(hs[1], self._expected_hidden_size(input, self.hidden_size), "hidden[1]")
        else:
            self._check_hidden_size(hs[0], self._expected_hidden_size(input, self.hidden_size))
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, c_n = self._run(x, hs[0], hs[1] if lstm else None)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return out, ((h_n, c_n) if lstm else h_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: ferrograd.Tensor, hx: ferrograd.Tensor | None = None):
        return self._forward("RNN", input, hx, lstm=False)


class LSTM(RNNBase):
    """Multi-layer LSTM with optional projections (``proj_size``); returns ``output, (h_n, c_n)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: ferrograd.Tensor, hx: tuple | None = None):
        return self._forward("LSTM", input, hx, lstm=True)


class GRU(RNNBase):
    """Multi-layer GRU; returns ``output, h_n``."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: ferrograd.Tensor, hx: ferrograd.Tensor | None = None):
        return self._forward("GRU", input, hx, lstm=False)
