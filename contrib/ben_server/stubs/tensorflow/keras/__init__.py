# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 the bridgeflow authors.
#
# This program is free software: you can redistribute it and/or modify it under the terms of the
# GNU General Public License as published by the Free Software Foundation, either version 3 of the
# License, or (at your option) any later version. It is distributed WITHOUT ANY WARRANTY; see
# <https://www.gnu.org/licenses/gpl-3.0.html>. It imports BEN (lorserker/ben, GPL-3.0) at run
# time and is kept apart from the Apache-2.0 bridgeflow package (docs/ben.md).
"""tensorflow.keras for BEN's imports (see the tensorflow stub)."""
