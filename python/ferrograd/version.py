"""``ferrograd.version``: the release, and the accelerator toolkits it was built with (none)."""

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]

__version__ = "0.1.0"
git_version = None
debug = False
cuda = None
hip = None
xpu = None
