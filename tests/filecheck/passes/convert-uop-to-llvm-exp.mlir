// RUN: opt-tool %s -p convert-uop-to-llvm | filecheck %s

// f32 exp is inline arithmetic (clamp, Cody-Waite reduction, polynomial, the exponent's
// integer from the bits of n + 1.5 * 2^23 (no fptosi: scalarised on x86), two power-of-two
// scalings), on vectors the same ops on vector types; f64 exp stays the intrinsic.
// CHECK-LABEL: llvm.func @k(
// CHECK:         llvm.call_intrinsic "llvm.maximum.f32"
// CHECK:         llvm.call_intrinsic "llvm.minimum.f32"
// CHECK:         llvm.call_intrinsic "llvm.rint.f32"
// CHECK:         llvm.bitcast %{{.*}} : f32 to i32
// CHECK-NOT:     fptosi
// CHECK:         llvm.shl
// CHECK:         llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NOT:     llvm.exp.f32
// CHECK:         llvm.call_intrinsic "llvm.maximum.v8f32"
// CHECK:         llvm.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK:         llvm.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         llvm.call_intrinsic "llvm.exp.f64"
pg_uop.kernel @k(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xf64>) {
  %c0 = pg_uop.const 0 : index
  %x = pg_uop.load %a[%c0] : !pg.buffer<8xf32> -> f32
  %e = pg_uop.unary exp %x : f32
  pg_uop.store %e, %a[%c0] : f32, !pg.buffer<8xf32>
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<8xf32>
  %ev = pg_uop.unary exp %v : vector<8xf32>
  pg_uop.vstore %ev, %a[%c0] : vector<8xf32>, !pg.buffer<8xf32>
  %y = pg_uop.load %b[%c0] : !pg.buffer<8xf64> -> f64
  %ey = pg_uop.unary exp %y : f64
  pg_uop.store %ey, %b[%c0] : f64, !pg.buffer<8xf64>
}
