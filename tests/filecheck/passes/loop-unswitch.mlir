// RUN: opt-tool %s -p loop-unswitch | filecheck %s
// RUN: opt-tool %s -p loop-unswitch | %roundtrip | filecheck %s

// A concatenation of a (4, 4) and a (4, 6) along dim 1: the range of that dim splits at 4,
// each piece loads one input without a mask.
// CHECK-LABEL: pg_loop.kernel @cat(
// CHECK-NEXT:    pg_loop.range %[[I:.*]] = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %[[J:.*]] = 0 to 4 global {
// CHECK-NOT:         pg_loop.cmp
// CHECK:             %[[A:.*]] = pg_loop.load %a[%{{.*}}] : !pg.buffer<16xf32> -> f32
// CHECK-NOT:         %b[
// CHECK:             pg_loop.store
// CHECK:           pg_loop.range %[[J2:.*]] = 4 to 10 global {
// CHECK-NOT:         pg_loop.cmp
// CHECK-NOT:         %a[
// CHECK:             %[[B:.*]] = pg_loop.load %b[%{{.*}}] : !pg.buffer<24xf32> -> f32
// CHECK:             pg_loop.store
pg_loop.kernel @cat(%a: !pg.buffer<16xf32>, %b: !pg.buffer<24xf32>, %out: !pg.buffer<40xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.range %j = 0 to 10 global {
      %c4 = pg_loop.const 4
      %c6 = pg_loop.const 6
      %m = pg_loop.cmp lt %j, %c4
      %n = pg_loop.cmp ge %j, %c4
      %ra = pg_loop.index mul %i, %c4
      %ia = pg_loop.index add %ra, %j
      %va = pg_loop.load %a[%ia] if %m else 0.0 : !pg.buffer<16xf32> -> f32
      %rb = pg_loop.index mul %i, %c6
      %jb = pg_loop.index sub %j, %c4
      %ib = pg_loop.index add %rb, %jb
      %vb = pg_loop.load %b[%ib] if %n else 0.0 : !pg.buffer<24xf32> -> f32
      %v = pg_uop.where %m, %va, %vb : f32
      %c10 = pg_loop.const 10
      %ro = pg_loop.index mul %i, %c10
      %io = pg_loop.index add %ro, %j
      pg_loop.store %v, %out[%io] : f32, !pg.buffer<40xf32>
    }
  }
}

// A concatenation along the outermost range (3 pieces of 8): it moves inside the range it
// holds first, so the kernel keeps one top-level range to run in chunks on threads.
// CHECK-LABEL: pg_loop.kernel @outer(
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 8 global {
// CHECK-NEXT:      pg_loop.range %{{.*}} = 0 to 1 global {
// CHECK:             pg_loop.load %a[
// CHECK:           pg_loop.range %{{.*}} = 1 to 3 global {
// CHECK-NOT:         pg_loop.load %a[
// CHECK:             pg_loop.load %b[
pg_loop.kernel @outer(%a: !pg.buffer<8xf32>, %b: !pg.buffer<16xf32>, %out: !pg.buffer<24xf32>) {
  pg_loop.range %p = 0 to 3 global {
    pg_loop.range %q = 0 to 8 global {
      %c1 = pg_loop.const 1
      %c8 = pg_loop.const 8
      %first = pg_loop.cmp lt %p, %c1
      %later = pg_loop.cmp ge %p, %c1
      %va = pg_loop.load %a[%q] if %first else 0.0 : !pg.buffer<8xf32> -> f32
      %pb = pg_loop.index sub %p, %c1
      %rb = pg_loop.index mul %pb, %c8
      %ib = pg_loop.index add %rb, %q
      %vb = pg_loop.load %b[%ib] if %later else 0.0 : !pg.buffer<16xf32> -> f32
      %v = pg_uop.where %first, %va, %vb : f32
      %ro = pg_loop.index mul %p, %c8
      %io = pg_loop.index add %ro, %q
      pg_loop.store %v, %out[%io] : f32, !pg.buffer<24xf32>
    }
  }
}

// The outermost range of a kernel holding no other range stays whole: several top-level
// loops could not run on threads.
// CHECK-LABEL: pg_loop.kernel @flat(
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 8 global {
// CHECK:           pg_loop.cmp lt
pg_loop.kernel @flat(%a: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) {
  pg_loop.range %i = 0 to 8 global {
    %c2 = pg_loop.const 2
    %m = pg_loop.cmp lt %i, %c2
    %v = pg_loop.load %a[%i] if %m else 0.0 : !pg.buffer<8xf32> -> f32
    pg_loop.store %v, %out[%i] : f32, !pg.buffer<8xf32>
  }
}
