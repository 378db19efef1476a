// pg_c's vector ops print as written, survive custom -> generic -> custom, and print as C
// vector extensions: one typedef pair per vector type, element-aligned loads and stores,
// a broadcast as an initialiser list, lane-wise operators (max/min as a bit blend by the
// lane masks: C has no `?:` on vectors) and an in-order reduction.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s -t c | filecheck %s --check-prefix=C

// CHECK-LABEL: pg_c.func @k(
// CHECK:       %acc = pg_c.decl 0.0 : vector<4xf32>
// CHECK-NEXT:  %v = pg_c.vload %a[%i] : !pg.buffer<8xf32> -> vector<4xf32>
// CHECK-NEXT:  %x = pg_c.const 2.0 : f32
// CHECK-NEXT:  %b = pg_c.broadcast %x : f32 -> vector<4xf32>
// CHECK-NEXT:  %m = pg_c.binary "*" %v, %b : vector<4xf32>
// CHECK-NEXT:  %n = pg_c.unary "-" %m : vector<4xf32>
// CHECK-NEXT:  pg_c.assign %acc, %n : vector<4xf32>
// CHECK-NEXT:  %r = pg_c.read %acc : vector<4xf32>
// CHECK-NEXT:  %s = pg_c.vreduce add %r : vector<4xf32> -> f32
// CHECK-NEXT:  pg_c.vstore %r, %out[%i] : vector<4xf32>, !pg.buffer<8xf32>
// CHECK-NEXT:  %mx = pg_c.binary "max" %r, %v : vector<4xf32>
// CHECK-NEXT:  %mn = pg_c.binary "min" %mx, %v : vector<4xf32>

// C:      typedef float pg_f32x4 __attribute__((vector_size(16)));
// C-NEXT: typedef float pg_f32x4_u __attribute__((vector_size(16), aligned(4), may_alias));
// C:      void k(float* restrict p0, float* restrict p1, int64_t start, int64_t end) {
// C:        pg_f32x4 [[ACC:.*]] = {0.0f, 0.0f, 0.0f, 0.0f};
// C-NEXT:   pg_f32x4 [[V:.*]] = *(const pg_f32x4_u*)(p0 + [[I:.*]]);
// C-NEXT:   float [[X:.*]] = 2.0f;
// C-NEXT:   pg_f32x4 [[B:.*]] = (pg_f32x4){[[X]], [[X]], [[X]], [[X]]};
// C-NEXT:   pg_f32x4 [[M:.*]] = [[V]] * [[B]];
// C-NEXT:   pg_f32x4 [[N:.*]] = -[[M]];
// C-NEXT:   [[ACC]] = [[N]];
// C-NEXT:   pg_f32x4 [[R:.*]] = [[ACC]];
// C-NEXT:   float {{.*}} = ((([[R]][0] + [[R]][1]) + [[R]][2]) + [[R]][3]);
// C-NEXT:   *(pg_f32x4_u*)(p1 + [[I]]) = [[R]];
// C-NEXT:   pg_f32x4 [[MX:.*]] = (pg_f32x4)(((__typeof__((([[R]] > [[V]]) | ([[R]] != [[R]]))))[[R]] & (([[R]] > [[V]]) | ([[R]] != [[R]]))) | ((__typeof__((([[R]] > [[V]]) | ([[R]] != [[R]]))))[[V]] & ~(([[R]] > [[V]]) | ([[R]] != [[R]]))));
// C-NEXT:   pg_f32x4 {{.*}} = (pg_f32x4)(((__typeof__((([[MX]] < [[V]]) | ([[MX]] != [[MX]]))))[[MX]]
pg_c.func @k(%a: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) restrict {
  %i = pg_c.const 4 : index
  %acc = pg_c.decl 0.0 : vector<4xf32>
  %v = pg_c.vload %a[%i] : !pg.buffer<8xf32> -> vector<4xf32>
  %x = pg_c.const 2.0 : f32
  %b = pg_c.broadcast %x : f32 -> vector<4xf32>
  %m = pg_c.binary "*" %v, %b : vector<4xf32>
  %n = pg_c.unary "-" %m : vector<4xf32>
  pg_c.assign %acc, %n : vector<4xf32>
  %r = pg_c.read %acc : vector<4xf32>
  %s = pg_c.vreduce add %r : vector<4xf32> -> f32
  pg_c.vstore %r, %out[%i] : vector<4xf32>, !pg.buffer<8xf32>
  %mx = pg_c.binary "max" %r, %v : vector<4xf32>
  %mn = pg_c.binary "min" %mx, %v : vector<4xf32>
}
