"""Utilities: activation checkpointing and data loading."""

from . import checkpoint, data
