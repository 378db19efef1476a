// Inputs the opt-tool fuzzer (issue 11) broke the tool with, each now one located
// diagnostic and a non-zero exit (scripts/fuzz_opt_tool.py; the cases xDSL's own checks miss).
// RUN: not opt-tool %s --split-input-file 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK-NOT: internal error

// A value used before its definition parses and passes xDSL's verifier (it does not check
// dominance); the lowerings then failed with a KeyError.
// CHECK: bad-input.mlir:[[# @LINE + 3]]:5: error: 'pg_loop.store': operand 0 (%c) is used before it is defined
pg_loop.kernel @use_before_def(%o: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.store %c, %o[%i] : f32, !pg.buffer<4xf32>
    %c = pg_uop.const 1.0 : f32
  }
}

// -----
// A value of the enclosing block, defined after the range that uses it.
// CHECK: bad-input.mlir:[[# @LINE + 3]]:5: error: 'pg_loop.store': operand 0 (%c) is used before it is defined
pg_loop.kernel @later_outside(%o: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.store %c, %o[%i] : f32, !pg.buffer<4xf32>
  }
  %c = pg_uop.const 1.0 : f32
}

// -----
// A misspelt enum word was a ValueError from `RangeKind(word)`.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:29: error: Expected `global`, `local`, `reduce`, `upcast`, `unroll`, or `loop`.
pg_loop.kernel @bad_kind(%o: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 globa {
    %c = pg_uop.const 1.0 : f32
    pg_loop.store %c, %o[%i] : f32, !pg.buffer<4xf32>
  }
}

// -----
// An upcast range of 2**62 lanes: convert-loop-to-uop would copy its body forever.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:3: error: 'pg_loop.range': an upcast range of 4611686018427387904 iterations: at most 4096 (each is a copy of the body)
pg_loop.kernel @huge_upcast(%o: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4611686018427387904 upcast {
    %c = pg_uop.const 1.0 : f32
    pg_loop.store %c, %o[%i] : f32, !pg.buffer<4xf32>
  }
}

// -----
// A bound past i64.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:3: error: 'pg_loop.range': range bounds [-9223372036854775809, 4) do not fit in i64
pg_loop.kernel @bound_past_i64(%o: !pg.buffer<4xf32>) {
  pg_loop.range %i = -9223372036854775809 to 4 global {
    %c = pg_uop.const 1.0 : f32
    pg_loop.store %c, %o[%i] : f32, !pg.buffer<4xf32>
  }
}

// -----
// A constant its type cannot hold was a VerifyException raised while parsing.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:8: error: Integer value 18446744073709551616 is out of range for type i32
pg_uop.kernel @too_big(%o: !pg.buffer<4xi32>) {
  %c = pg_uop.const 18446744073709551616 : i32
}

// -----
// A constant of a type picograd has no numbers of was an AssertionError.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:8: error: a constant cannot have type f80 (expected an integer, float or index type)
pg_uop.kernel @f80_const(%o: !pg.buffer<4xf32>) {
  %c = pg_uop.const 0 : f80
}

// -----
// A launch size past i64 was a ValueError from the dense array.
// CHECK: bad-input.mlir:[[# @LINE + 1]]:59: error: 18446744073709551616 does not fit in i64
pg_wgsl.fn @huge_block(%o: !pg.buffer<4xf32>) grid [1, 1, 18446744073709551616] block [1, 1, 1] {
}

// -----
// An op of another stage in a target kernel reached the printer as "not a value op".
// CHECK: bad-input.mlir:[[# @LINE + 1]]:1: error: 'pg_wgsl.fn': @foreign: 'pg_loop.const' cannot be in a pg_wgsl.fn (its body holds pg_wgsl ops only)
pg_wgsl.fn @foreign(%o: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_loop.const 4
}

// -----
// A dense array element its type cannot hold was a struct.error in xDSL's llvm dialect.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:8: error: constant out of range: 'i' format requires -2147483648 <= number <= 2147483647
llvm.func @shuffle(%v: vector<4xf32>) -> vector<4xf32> {
  %s = llvm.shufflevector %v, %v [0, 1, 2, 2147483648] : vector<4xf32>
  llvm.return %s : vector<4xf32>
}

// -----
// A misspelt enum word in xDSL's llvm syntax was a ValueError from `Enum(word)`.
// CHECK: bad-input.mlir:[[# @LINE + 2]]:8: error: 'sl' is not a valid ICmpPredicateFlag
llvm.func @icmp(%a: i32, %b: i32) -> i1 {
  %c = llvm.icmp "sl" %a, %b : i32
  llvm.return %c : i1
}

// -----
// Brackets nested past what xDSL's recursive parser survives were a RecursionError.
// CHECK: bad-input.mlir:[[# @LINE + 1]]:131: error: brackets nested more than 100 deep
builtin.module attributes {a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} {
}

// -----
// A bad escape in a string: xDSL's lexer would backtrack over the string exponentially.
// CHECK: bad-input.mlir:[[# @LINE + 1]]:36: error: bad escape in string literal: use \n, \t, \\, \" or two hex digits
builtin.module attributes {a = "abc\qdefghijklmnopqrstuvwxyz0123456789"} {
}

// -----
// An unterminated string, the same (28 characters took 12 s); it is the last case, since
// the rest of its line is in the string.
// CHECK: bad-input.mlir:[[# @LINE + 1]]:32: error: unterminated string literal (a '"' is missing before the end of the line)
builtin.module attributes {a = "abcdefghijklmnopqrstuvwxyz0123456789} {
}
