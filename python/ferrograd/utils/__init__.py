"""Utilities: activation checkpointing."""

from . import checkpoint
