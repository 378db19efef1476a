"""Exact constant arithmetic (`rules.scalar`): C integer semantics, IEEE floats, casts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, f16, f32, f64, i1, i8, i16, i32, i64

from picograd.dialects.dtypes import ui8
from picograd.dialects.pg import BinaryKind, CmpKind, UnaryKind
from picograd.passes.rules import scalar

DIV, MOD = BinaryKind.DIV, BinaryKind.MOD


@pytest.mark.parametrize(("a", "b", "q", "r"), [
    (7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (0, 5, 0, 0),
])
def test_integer_division_truncates_like_c(a: int, b: int, q: int, r: int):
    assert scalar.binary(DIV, a, b, i32) == q
    assert scalar.binary(MOD, a, b, i32) == r


@pytest.mark.parametrize(("a", "b"), [(1, 0), (-128, -1)])
def test_undefined_integer_division_is_not_folded(a: int, b: int):
    assert scalar.binary(DIV, a, b, i8) is None
    assert scalar.binary(MOD, a, b, i8) is None


def test_integers_wrap_at_their_width():
    assert scalar.binary(BinaryKind.ADD, 127, 1, i8) == -128
    assert scalar.binary(BinaryKind.MUL, 200, 2, ui8) == 144
    assert scalar.unary(UnaryKind.NEG, -(2**63), IndexType()) == -(2**63)
    assert scalar.unary(UnaryKind.NOT, 0, ui8) == 255
    assert scalar.unary(UnaryKind.NOT, 1, i1) == 0


def test_floats_round_in_their_own_type():
    third = scalar.binary(DIV, 1.0, 3.0, f32)
    assert third == float(np.float32(1) / np.float32(3)) != 1 / 3
    assert scalar.binary(BinaryKind.ADD, 65504.0, 65504.0, f16) == math.inf
    assert math.copysign(1, scalar.binary(BinaryKind.ADD, -0.0, -0.0, f32)) == -1
    assert math.isnan(scalar.binary(BinaryKind.MAX, math.nan, 1.0, f64))


def test_comparisons_follow_ieee():
    assert scalar.compare(CmpKind.EQ, -0.0, 0.0, f32) == 1
    assert scalar.compare(CmpKind.NE, math.nan, math.nan, f32) == 1
    assert scalar.compare(CmpKind.LT, math.nan, 1.0, f32) == 0


@pytest.mark.parametrize(("a", "src", "dst", "want"), [
    (-2.7, f32, i32, -2), (2.7, f64, i8, 2), (math.nan, f32, i1, 1), (-0.0, f32, i1, 0),
    (300, i32, i8, 44), (-1, i8, ui8, 255), (1, i1, f32, 1.0), (2**24 + 1, i32, f32, 2.0**24),
])
def test_casts_follow_c(a: float, src, dst, want: float):
    assert scalar.cast(a, src, dst) == want


@pytest.mark.parametrize(("a", "dst"), [(math.nan, i32), (math.inf, i64), (300.0, i8),
                                        (-1.0, ui8)])
def test_undefined_float_to_int_casts_are_not_folded(a: float, dst):
    assert scalar.cast(a, f32, dst) is None


@pytest.mark.parametrize(("src", "dst", "lossless"), [
    (i1, f16, True), (i8, i16, True), (ui8, i8, False), (i8, ui8, False), (i16, f32, True),
    (i32, f32, False), (i32, f64, True), (f16, f32, True), (f64, f32, False), (f32, i64, False),
    (i32, i1, False), (i64, IndexType(), True), (ui8, f16, True), (i16, f16, False),
])
def test_lossless_casts(src, dst, lossless: bool):
    assert scalar.is_lossless(src, dst) is lossless
