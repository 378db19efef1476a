// pg_uop.fma (a * b + c rounded once) prints as written and survives custom -> generic ->
// custom, on scalars and vectors (vectors-invalid.mlir: floats only).
// RUN: opt-tool %s --split-input-file | %roundtrip | filecheck %s
// RUN: opt-tool %s --split-input-file --print-op-generic | opt-tool --split-input-file | filecheck %s

// CHECK-LABEL: pg_uop.kernel @step(
// CHECK:         %f = pg_uop.fma %x, %y, %z : f32
// CHECK:         %g = pg_uop.fma %v, %v, %w : vector<8xf32>
pg_uop.kernel @step(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %x = pg_uop.load %a[%c0] : !pg.buffer<8xf32> -> f32
  %y = pg_uop.const 2.0 : f32
  %z = pg_uop.const -1.0 : f32
  %f = pg_uop.fma %x, %y, %z : f32
  pg_uop.store %f, %a[%c0] : f32, !pg.buffer<8xf32>
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<8xf32>
  %w = pg_uop.broadcast %f : f32 -> vector<8xf32>
  %g = pg_uop.fma %v, %v, %w : vector<8xf32>
  pg_uop.vstore %g, %a[%c0] : vector<8xf32>, !pg.buffer<8xf32>
}
