// The scalar bit ops of pg_uop and of the source targets: shifts (binary shl / shr, "<<" /
// ">>") and bitcasts print as written and survive custom -> generic -> custom.
// RUN: opt-tool %s | %roundtrip | filecheck %s

// CHECK-LABEL: pg_uop.kernel @k0(
// CHECK:       %s = pg_uop.binary shl %v, %v : i32
// CHECK-NEXT:  %r = pg_uop.binary shr %s, %v : i32
// CHECK-NEXT:  %f = pg_uop.bitcast %r : i32 to f32
// CHECK-NEXT:  %c = pg_uop.const 7 : i16
// CHECK-NEXT:  %h = pg_uop.bitcast %c : i16 to f16
pg_uop.kernel @k0(%a: !pg.buffer<4xi32>, %out: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %v = pg_uop.load %a[%i] : !pg.buffer<4xi32> -> i32
  %s = pg_uop.binary shl %v, %v : i32
  %r = pg_uop.binary shr %s, %v : i32
  %f = pg_uop.bitcast %r : i32 to f32
  %c = pg_uop.const 7 : i16
  %h = pg_uop.bitcast %c : i16 to f16
  pg_uop.store %f, %out[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// CHECK-LABEL: pg_c.func @k1(
// CHECK:       %s = pg_c.binary "<<" %v, %v : i32
// CHECK-NEXT:  %r = pg_c.binary ">>" %s, %v : i32
// CHECK-NEXT:  %f = pg_c.bitcast %r : i32 to f32
pg_c.func @k1(%a: !pg.buffer<4xi32>, %out: !pg.buffer<4xf32>) restrict {
  %i = pg_c.for 0 to 4
  %v = pg_c.load %a[%i] : !pg.buffer<4xi32> -> i32
  %s = pg_c.binary "<<" %v, %v : i32
  %r = pg_c.binary ">>" %s, %v : i32
  %f = pg_c.bitcast %r : i32 to f32
  pg_c.store %f, %out[%i] : f32, !pg.buffer<4xf32>
  pg_c.end_for %i
}

