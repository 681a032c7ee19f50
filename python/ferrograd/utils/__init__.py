"""Utilities: activation checkpointing, data loading, DLPack exchange, hook handles and timing."""

from . import benchmark, checkpoint, data, dlpack, hooks
