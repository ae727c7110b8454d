# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 the bridgeflow authors.
#
# This program is free software: you can redistribute it and/or modify it under the terms of the
# GNU General Public License as published by the Free Software Foundation, either version 3 of the
# License, or (at your option) any later version. It is distributed WITHOUT ANY WARRANTY; see
# <https://www.gnu.org/licenses/gpl-3.0.html>. It imports BEN (lorserker/ben, GPL-3.0) at run
# time and is kept apart from the Apache-2.0 bridgeflow package (docs/ben.md).
"""Stands in for tensorflow, which BEN imports but never runs with its ONNX config (onnx.conf):
it saves a 1 GB install and seconds of start-up. Anything that would run TensorFlow fails loudly."""

__version__ = "0 (bridgeflow stub: BEN's ONNX models only)"


float16, float32 = "float16", "float32"


def function(func=None, **options):
    """BEN's TensorFlow model classes decorate their methods with it at import: left as they are."""
    return func if func is not None else (lambda method: method)


def TensorSpec(shape, dtype=None, name=None):
    """The decorators' signatures: kept as a description, never used."""
    return {"shape": shape, "dtype": dtype, "name": name}


def is_tensor(value) -> bool:
    """Nothing is a TensorFlow tensor: every model here runs in onnxruntime."""
    return False


def __getattr__(name: str):
    raise AttributeError(f"tensorflow.{name}: this is bridgeflow's stub for BEN's ONNX config, "
                         "which never runs TensorFlow")
