"""Utilities: activation checkpointing, data loading, DLPack exchange and hook handles."""

from . import checkpoint, data, dlpack, hooks
