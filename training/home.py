"""Where the repository's own files are found when the code runs: the shipped models (models/),
the committed results (results/) and the BEN server (contrib/ben_server). In a checkout they sit
beside the code; an installed wheel carries none of them, so the environment variable
BRIDGEFLOW_HOME names a bridgeflow checkout (or a folder holding those folders) for it."""

from __future__ import annotations

import os
from pathlib import Path

HOME_VARIABLE = "BRIDGEFLOW_HOME"
CHECKOUT = Path(__file__).resolve().parents[1]  # training/ sits at the checkout's top (in a wheel: bridgeflow/)
HOME = Path(os.environ[HOME_VARIABLE]).expanduser().resolve() if os.environ.get(HOME_VARIABLE) else CHECKOUT


def hint() -> str:
    """What a message about a missing shipped file adds when the code runs installed, not from a checkout."""
    installed = not os.environ.get(HOME_VARIABLE) and not (CHECKOUT / "pyproject.toml").is_file()
    return f" (installed, bridgeflow finds its shipped files through {HOME_VARIABLE}=A_CHECKOUT)" if installed else ""
