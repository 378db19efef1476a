// RUN: opt-tool %s -p uop-simplify | filecheck %s

// CHECK-LABEL: pg_uop.kernel @identities(
// CHECK:         %[[I:.*]] = pg_uop.range 0 to 16 global
// CHECK-NEXT:    %[[V:.*]] = pg_uop.load %{{.*}}[%[[I]]] : !pg.buffer<16xf32> -> f32
// CHECK-NEXT:    %[[Z:.*]] = pg_uop.const 0.0 : f32
// CHECK-NEXT:    %[[A:.*]] = pg_uop.binary add %[[V]], %[[Z]] : f32
// CHECK-NEXT:    pg_uop.store %[[V]], %{{.*}}[%[[I]]]
// CHECK-NEXT:    pg_uop.store %[[A]], %{{.*}}[%[[I]]]
// CHECK-NEXT:    pg_uop.end %[[I]]
pg_uop.kernel @identities(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
  %i = pg_uop.range 0 to 16 global
  %c0 = pg_uop.const 0 : index
  %c1 = pg_uop.const 1 : index
  %i0 = pg_uop.binary add %i, %c0 : index
  %i1 = pg_uop.binary mul %c1, %i0 : index
  %v = pg_uop.load %a[%i1] : !pg.buffer<16xf32> -> f32
  %one = pg_uop.const 1.0 : f32
  %zero = pg_uop.const 0.0 : f32
  %x = pg_uop.binary mul %v, %one : f32
  %y = pg_uop.binary div %x, %one : f32
  %n = pg_uop.unary neg %y : f32
  %nn = pg_uop.unary neg %n : f32
  %same = pg_uop.cast %nn : f32 to f32
  %keep = pg_uop.binary add %same, %zero : f32
  pg_uop.store %same, %out[%i1] : f32, !pg.buffer<16xf32>
  pg_uop.store %keep, %out[%i1] : f32, !pg.buffer<16xf32>
  pg_uop.end %i
}

// C semantics: -7/2 is -3 and -7%2 is -1; i32 arithmetic wraps; float math rounds to f32.
// CHECK-LABEL: pg_uop.kernel @folding(
// CHECK-DAG:     %[[Q:.*]] = pg_uop.const -3 : i32
// CHECK-DAG:     %[[R:.*]] = pg_uop.const -1 : i32
// CHECK-DAG:     %[[W:.*]] = pg_uop.const -2147483648 : i32
// CHECK-DAG:     %[[F:.*]] = pg_uop.const 0.10000000149011612 : f32
// CHECK-DAG:     %[[T:.*]] = pg_uop.const 7 : i32
// CHECK:         pg_uop.store %[[Q]]
// CHECK-NEXT:    pg_uop.store %[[R]]
// CHECK-NEXT:    pg_uop.store %[[W]]
// CHECK-NEXT:    pg_uop.store %[[T]]
// CHECK-NEXT:    pg_uop.store %[[F]]
pg_uop.kernel @folding(%out: !pg.buffer<4xi32>, %f: !pg.buffer<1xf32>) {
  %m7 = pg_uop.const -7 : i32
  %two = pg_uop.const 2 : i32
  %max = pg_uop.const 2147483647 : i32
  %one = pg_uop.const 1 : i32
  %q = pg_uop.binary div %m7, %two : i32
  %r = pg_uop.binary mod %m7, %two : i32
  %w = pg_uop.binary add %max, %one : i32
  %lt = pg_uop.cmp lt %m7, %two : i32
  %sel = pg_uop.where %lt, %w, %q : i32
  %neg = pg_uop.unary neg %m7 : i32
  %t = pg_uop.where %lt, %neg, %q : i32
  %c0 = pg_uop.const 0 : index
  %tenth = pg_uop.const 0.1 : f64
  %ft = pg_uop.cast %tenth : f64 to f32
  pg_uop.store %q, %out[%c0] : i32, !pg.buffer<4xi32>
  pg_uop.store %r, %out[%c0] : i32, !pg.buffer<4xi32>
  pg_uop.store %sel, %out[%c0] : i32, !pg.buffer<4xi32>
  pg_uop.store %t, %out[%c0] : i32, !pg.buffer<4xi32>
  pg_uop.store %ft, %f[%c0] : f32, !pg.buffer<1xf32>
}

// Folding stops where C leaves the result undefined.
// CHECK-LABEL: pg_uop.kernel @undefined(
// CHECK:         pg_uop.binary div
// CHECK:         pg_uop.cast %{{.*}} : f32 to i32
pg_uop.kernel @undefined(%out: !pg.buffer<2xi32>) {
  %one = pg_uop.const 1 : i32
  %zero = pg_uop.const 0 : i32
  %q = pg_uop.binary div %one, %zero : i32
  %nan = pg_uop.const nan : f32
  %c = pg_uop.cast %nan : f32 to i32
  %c0 = pg_uop.const 0 : index
  pg_uop.store %q, %out[%c0] : i32, !pg.buffer<2xi32>
  pg_uop.store %c, %out[%c0] : i32, !pg.buffer<2xi32>
}

// The ALU ops inside pg_loop bodies are simplified too.
// CHECK-LABEL: pg_loop.kernel @in_loops(
// CHECK:         %[[V:.*]] = pg_loop.load
// CHECK-NEXT:    pg_loop.store %[[V]]
pg_loop.kernel @in_loops(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %v = pg_loop.load %a[%i] : !pg.buffer<4xf32> -> f32
    %t = pg_uop.const 1 : i1
    %one = pg_uop.const 1.0 : f32
    %m = pg_uop.binary mul %v, %one : f32
    %s = pg_uop.where %t, %m, %v : f32
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
  }
}
