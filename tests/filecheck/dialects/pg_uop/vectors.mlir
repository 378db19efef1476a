// pg_uop's vector ops print as written and survive custom -> generic -> custom: a vector
// accumulator, vload / vstore of consecutive elements (and a vload of every 2nd one), broadcast, lane-wise binary and
// unary ops, and vreduce.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s

// CHECK-LABEL: pg_uop.kernel @dot(
// CHECK:       %acc = pg_uop.acc 0.0 : vector<16xf32>
// CHECK:       %v = pg_uop.vload %a[%o] : !pg.buffer<64xf32> -> vector<16xf32>
// CHECK-NEXT:  %vs = pg_uop.vload %a[%o] step(2) : !pg.buffer<64xf32> -> vector<16xf32>
// CHECK-NEXT:  %x = pg_uop.const 2.0 : f32
// CHECK-NEXT:  %b = pg_uop.broadcast %x : f32 -> vector<16xf32>
// CHECK-NEXT:  %m = pg_uop.binary mul %v, %b : vector<16xf32>
// CHECK-NEXT:  %n = pg_uop.unary neg %m : vector<16xf32>
// CHECK-NEXT:  %old = pg_uop.acc_load %acc : vector<16xf32>
// CHECK-NEXT:  %new = pg_uop.binary add %old, %n : vector<16xf32>
// CHECK-NEXT:  pg_uop.acc_store %acc, %new : vector<16xf32>
// CHECK:       %s = pg_uop.vreduce add %r : vector<16xf32> -> f32
// CHECK:       pg_uop.vstore %r, %out[%c0] : vector<16xf32>, !pg.buffer<20xf32>
pg_uop.kernel @dot(%a: !pg.buffer<64xf32>, %out: !pg.buffer<20xf32>) {
  %c0 = pg_uop.const 0 : index
  %acc = pg_uop.acc 0.0 : vector<16xf32>
  %i = pg_uop.range 0 to 4 reduce
  %c16 = pg_uop.const 16 : index
  %o = pg_uop.binary mul %i, %c16 : index
  %v = pg_uop.vload %a[%o] : !pg.buffer<64xf32> -> vector<16xf32>
  %vs = pg_uop.vload %a[%o] step(2) : !pg.buffer<64xf32> -> vector<16xf32>
  %x = pg_uop.const 2.0 : f32
  %b = pg_uop.broadcast %x : f32 -> vector<16xf32>
  %m = pg_uop.binary mul %v, %b : vector<16xf32>
  %n = pg_uop.unary neg %m : vector<16xf32>
  %old = pg_uop.acc_load %acc : vector<16xf32>
  %new = pg_uop.binary add %old, %n : vector<16xf32>
  pg_uop.acc_store %acc, %new : vector<16xf32>
  pg_uop.end %i
  %r = pg_uop.acc_load %acc : vector<16xf32>
  %s = pg_uop.vreduce add %r : vector<16xf32> -> f32
  %c16o = pg_uop.const 16 : index
  pg_uop.store %s, %out[%c16o] : f32, !pg.buffer<20xf32>
  pg_uop.vstore %r, %out[%c0] : vector<16xf32>, !pg.buffer<20xf32>
}
