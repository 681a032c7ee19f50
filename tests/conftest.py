"""Hypothesis settings: CI runs a fixed, derandomised set of examples so a
green run stays green; local runs explore new examples each time."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
