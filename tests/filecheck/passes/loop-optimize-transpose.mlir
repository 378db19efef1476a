// A transposing copy (stores along its inner range, loads along the outer one, 64 elements
// apart per inner step) is walked in 16 x 16 blocks: 16 upcast lanes of the outer range
// around loops of 16 of the inner one, so a block's 16 input lines serve its 16 output rows
// while they are in the L1 cache (transpose_tiles.py).
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=64 registers=32}' | filecheck %s
// CHECK-LABEL: pg_loop.kernel @transpose({{.*}} attributes {pg.schedule = "split(0, 16, upcast); split(2, 16, loop); interchange(1)"} {
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %{{.*}} = 0 to 8 global {
// CHECK:             pg_loop.range %{{.*}} = 0 to 16 upcast {
// CHECK:               pg_loop.range %{{.*}} = 0 to 16 loop {
pg_loop.kernel @transpose(%in: !pg.buffer<8192xf32>, %out: !pg.buffer<8192xf32>) {
  pg_loop.range %i = 0 to 64 global {
    pg_loop.range %k = 0 to 128 global {
      %c64 = pg_loop.const 64
      %a = pg_loop.index mul %k, %c64
      %src = pg_loop.index add %a, %i
      %v = pg_loop.load %in[%src] : !pg.buffer<8192xf32> -> f32
      %c128 = pg_loop.const 128
      %b = pg_loop.index mul %i, %c128
      %dst = pg_loop.index add %b, %k
      pg_loop.store %v, %out[%dst] : f32, !pg.buffer<8192xf32>
    }
  }
}

// An inner range shorter than 64 steps touches few enough lines to keep them in the L1
// cache from one row to the next: no blocks (and no vector form: no schedule at all).
// CHECK-LABEL: pg_loop.kernel @short_rows(
// CHECK-NOT:     pg.schedule
// CHECK-NOT:     upcast
pg_loop.kernel @short_rows(%in: !pg.buffer<2048xf32>, %out: !pg.buffer<2048xf32>) {
  pg_loop.range %i = 0 to 64 global {
    pg_loop.range %k = 0 to 32 global {
      %c64 = pg_loop.const 64
      %a = pg_loop.index mul %k, %c64
      %src = pg_loop.index add %a, %i
      %v = pg_loop.load %in[%src] : !pg.buffer<2048xf32> -> f32
      %c32 = pg_loop.const 32
      %b = pg_loop.index mul %i, %c32
      %dst = pg_loop.index add %b, %k
      pg_loop.store %v, %out[%dst] : f32, !pg.buffer<2048xf32>
    }
  }
}

// A copy that loads along its inner range has a vector form: vector lanes, no blocks.
// CHECK-LABEL: pg_loop.kernel @contiguous({{.*}} attributes {pg.schedule = "collapse(0); split(0, 16, upcast)"} {
pg_loop.kernel @contiguous(%in: !pg.buffer<8192xf32>, %out: !pg.buffer<8192xf32>) {
  pg_loop.range %i = 0 to 64 global {
    pg_loop.range %k = 0 to 128 global {
      %c128 = pg_loop.const 128
      %b = pg_loop.index mul %i, %c128
      %dst = pg_loop.index add %b, %k
      %v = pg_loop.load %in[%dst] : !pg.buffer<8192xf32> -> f32
      pg_loop.store %v, %out[%dst] : f32, !pg.buffer<8192xf32>
    }
  }
}
