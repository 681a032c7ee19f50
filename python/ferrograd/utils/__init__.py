"""Utilities: activation checkpointing, data loading and DLPack exchange."""

from . import checkpoint, data, dlpack
