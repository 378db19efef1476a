// RUN: opt-tool %s --split-input-file -p 'loop-upcast{rows=2 cols=8},convert-loop-to-uop{vectorize=true},cse' | filecheck %s
// RUN: opt-tool %s --split-input-file -p 'loop-upcast{rows=2 cols=8},convert-loop-to-uop{vectorize=true},cse,convert-uop-to-llvm' | filecheck %s --check-prefix=LLVM
// RUN: opt-tool %s --split-input-file -p 'loop-upcast{rows=2 cols=8},convert-loop-to-uop{vectorize=true},cse,convert-uop-to-c' -t c | filecheck %s --check-prefix=C

// A matmul in 2 x 8 tiles: the 8 column lanes become vectors, the 2 row lanes stay
// copies. One reduce loop holds one vector accumulator per row; a row's element of A is
// loaded once and broadcast, the row of B is one vload; each row of the tile is stored
// with one vstore.
// CHECK-LABEL: pg_uop.kernel @mm(
// CHECK:         pg_uop.acc 0.0 : vector<8xf32>
// CHECK-NEXT:    pg_uop.acc 0.0 : vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = pg_uop.range 0 to 8 reduce
// CHECK:         %[[X:.*]] = pg_uop.load %a[%{{.*}}] : !pg.buffer<64xf32> -> f32
// CHECK:         %[[B:.*]] = pg_uop.vload %b[%{{.*}}] : !pg.buffer<128xf32> -> vector<8xf32>
// CHECK:         %[[XB:.*]] = pg_uop.broadcast %[[X]] : f32 -> vector<8xf32>
// CHECK-NEXT:    pg_uop.binary mul %[[XB]], %[[B]] : vector<8xf32>
// CHECK:         pg_uop.binary add %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         pg_uop.end %[[R]]
// CHECK-COUNT-2: pg_uop.vstore %{{.*}}, %out[%{{.*}}] : vector<8xf32>, !pg.buffer<128xf32>
// CHECK-NOT:     pg_uop.store

// LLVM-LABEL: llvm.func @mm(
// LLVM:         llvm.alloca %{{.*}} x vector<8xf32> {alignment = 4 : i64}
// LLVM:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// LLVM:         llvm.shufflevector
// LLVM:         llvm.fmul %{{.*}}, %{{.*}} : vector<8xf32>
// LLVM:         llvm.fadd %{{.*}}, %{{.*}} : vector<8xf32>
// LLVM:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// C:     typedef float pg_f32x8 __attribute__((vector_size(32)));
// C-LABEL: void mm(
// C:       pg_f32x8 {{.*}} = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
// C:       pg_f32x8 {{.*}} = *(const pg_f32x8_u*)(p1 + {{.*}});
// C:       *(pg_f32x8_u*)(p2 + {{.*}}) = {{.*}};
pg_loop.kernel @mm(%a: !pg.buffer<64xf32>, %b: !pg.buffer<128xf32>, %out: !pg.buffer<128xf32>) {
  pg_loop.range %i0 = 0 to 8 global {
    pg_loop.range %i1 = 0 to 16 global {
      %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
        %c8 = pg_loop.const 8
        %c16 = pg_loop.const 16
        %ar = pg_loop.index mul %i0, %c8
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<64xf32> -> f32
        %br = pg_loop.index mul %r, %c16
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<128xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 16
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<128xf32>
    }
  }
}

// -----

// The same tile on an integer matmul has no vector form: scalar lanes, one accumulator
// each.
// CHECK-LABEL: pg_uop.kernel @int_mm(
// CHECK-COUNT-16: pg_uop.acc 0 : i32
// CHECK-NOT:      pg_uop.vload
// CHECK-NOT:      vector
pg_loop.kernel @int_mm(%a: !pg.buffer<64xi32>, %b: !pg.buffer<128xi32>, %out: !pg.buffer<128xi32>) {
  pg_loop.range %i0 = 0 to 8 global {
    pg_loop.range %i1 = 0 to 16 global {
      %s = pg_loop.reduce sum %r = 0 to 8 : i32 {
        %c8 = pg_loop.const 8
        %c16 = pg_loop.const 16
        %ar = pg_loop.index mul %i0, %c8
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<64xi32> -> i32
        %br = pg_loop.index mul %r, %c16
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<128xi32> -> i32
        %xy = pg_uop.binary mul %x, %y : i32
        pg_loop.yield %xy : i32
      }
      %n = pg_loop.const 16
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : i32, !pg.buffer<128xi32>
    }
  }
}

// -----

// Row sums tiled by `loop-upcast` put 8 rows in lanes: their elements are 8 apart, a
// gather, so the lanes stay scalar.
// CHECK-LABEL: pg_uop.kernel @rows(
// CHECK-COUNT-8: pg_uop.acc 0.0 : f32
// CHECK-NOT:     vector
pg_loop.kernel @rows(%a: !pg.buffer<128xf32>, %out: !pg.buffer<16xf32>) {
  pg_loop.range %i = 0 to 16 global {
    %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
      %c8 = pg_loop.const 8
      %ar = pg_loop.index mul %i, %c8
      %ai = pg_loop.index add %ar, %r
      %x = pg_loop.load %a[%ai] : !pg.buffer<128xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<16xf32>
  }
}
