// RUN: opt-tool %s -p 'loop-collapse{kernel=mm axis=1}' | filecheck %s
// RUN: opt-tool %s -p 'loop-collapse{axis=0}' | filecheck %s --check-prefix=ROWS

// A matmul whose columns are a 4 x 8 grid, read and written as 32 consecutive elements:
// collapsing the grid's two ranges gives one range of 32, and the flat index is that
// range itself once `(j // 8) * 8 + j % 8` is added back.
// CHECK-LABEL: pg_loop.kernel @mm(
// CHECK-SAME:    pg.schedule = "collapse(1)"
// CHECK:         pg_loop.range %i = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %[[J:.*]] = 0 to 32 global {
// CHECK:             %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
// CHECK-NOT:           pg_loop.index div
// CHECK-NOT:           pg_loop.index mod
// CHECK:               pg_loop.index add %{{.*}}, %[[J]]
// CHECK:           pg_loop.index add %{{.*}}, %[[J]]
// CHECK-NEXT:      pg_loop.store %s

// Collapsing the rows with the grid's rows needs both back (`j // 4`, `j % 4`): the action
// applies (to every kernel it fits, with `kernel` empty), the division stays.
// ROWS-LABEL: pg_loop.kernel @mm(
// ROWS-SAME:    pg.schedule = "collapse(0)"
// ROWS:         pg_loop.range %{{.*}} = 0 to 16 global {
// ROWS:           pg_loop.index div
pg_loop.kernel @mm(%a: !pg.buffer<32xf32>, %b: !pg.buffer<256xf32>, %out: !pg.buffer<128xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.range %h = 0 to 4 global {
      pg_loop.range %w = 0 to 8 global {
        %c8 = pg_loop.const 8
        %hw = pg_loop.index mul %h, %c8
        %col = pg_loop.index add %hw, %w
        %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
          %ar = pg_loop.index mul %i, %c8
          %ai = pg_loop.index add %ar, %r
          %x = pg_loop.load %a[%ai] : !pg.buffer<32xf32> -> f32
          %c32 = pg_loop.const 32
          %br = pg_loop.index mul %r, %c32
          %c8b = pg_loop.const 8
          %hb = pg_loop.index mul %h, %c8b
          %bh = pg_loop.index add %br, %hb
          %bi = pg_loop.index add %bh, %w
          %y = pg_loop.load %b[%bi] : !pg.buffer<256xf32> -> f32
          %xy = pg_uop.binary mul %x, %y : f32
          pg_loop.yield %xy : f32
        }
        %c32o = pg_loop.const 32
        %or = pg_loop.index mul %i, %c32o
        %oi = pg_loop.index add %or, %col
        pg_loop.store %s, %out[%oi] : f32, !pg.buffer<128xf32>
      }
    }
  }
}
