// RUN: opt-tool %s -p loop-simplify | filecheck %s

// A view's index math (split into rows and columns, joined back) collapses, and the padding
// mask that the bounds prove always true is dropped from the load.
// CHECK-LABEL: pg_loop.kernel @reindex(
// CHECK:         pg_loop.range %[[I:.*]] = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %[[J:.*]] = 0 to 8 loop {
// CHECK-NEXT:        %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[O:.*]] = pg_loop.index mul %[[I]], %[[C8]]
// CHECK-NEXT:        %[[F:.*]] = pg_loop.index add %[[O]], %[[J]]
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %{{.*}}[%[[F]]] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:        pg_loop.store %[[V]], %{{.*}}[%[[F]]] : f32, !pg.buffer<32xf32>
pg_loop.kernel @reindex(%a: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.range %j = 0 to 8 loop {
      %c8 = pg_loop.const 8
      %c0 = pg_loop.const 0
      %c1 = pg_loop.const 1
      %c32 = pg_loop.const 32
      %o = pg_loop.index mul %i, %c8
      %idx = pg_loop.index add %o, %j
      %q = pg_loop.index div %idx, %c8
      %r = pg_loop.index mod %idx, %c8
      %q8 = pg_loop.index mul %q, %c8
      %flat = pg_loop.index add %q8, %r
      %z = pg_loop.index mul %flat, %c1
      %m0 = pg_loop.cmp ge %z, %c0
      %m1 = pg_loop.cmp lt %z, %c32
      %m = pg_loop.and %m0, %m1
      %v = pg_loop.load %a[%z] if %m else 0.0 : !pg.buffer<32xf32> -> f32
      pg_loop.store %v, %out[%z] : f32, !pg.buffer<32xf32>
    }
  }
}

// CHECK-LABEL: pg_loop.kernel @folding(
// CHECK:         pg_loop.range %[[I:.*]] = 0 to 16 global {
// CHECK-NEXT:      %{{.*}} = pg_uop.const 1.0 : f32
// CHECK-NEXT:      %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:      %[[D:.*]] = pg_loop.index div %[[I]], %[[C4]]
// CHECK-NEXT:      %[[C5:.*]] = pg_loop.const 5
// CHECK-NEXT:      %[[A:.*]] = pg_loop.index add %[[D]], %[[C5]]
// CHECK-NEXT:      %[[C6:.*]] = pg_loop.const 6
// CHECK-NEXT:      %[[M:.*]] = pg_loop.index mul %[[I]], %[[C6]]
// CHECK-NEXT:      %[[C3:.*]] = pg_loop.const 3
// CHECK-NEXT:      %[[R:.*]] = pg_loop.index mod %[[I]], %[[C3]]
// CHECK-NEXT:      %[[C0:.*]] = pg_loop.const 0
// CHECK-NEXT:      pg_loop.store %{{.*}}, %{{.*}}[%[[A]]]
// CHECK-NEXT:      pg_loop.store %{{.*}}, %{{.*}}[%[[M]]]
// CHECK-NEXT:      pg_loop.store %{{.*}}, %{{.*}}[%[[R]]]
// CHECK-NEXT:      pg_loop.store %{{.*}}, %{{.*}}[%[[C0]]]
pg_loop.kernel @folding(%out: !pg.buffer<128xf32>) {
  pg_loop.range %i = 0 to 16 global {
    %v = pg_uop.const 1.0 : f32
    %c2 = pg_loop.const 2
    %c3 = pg_loop.const 3
    %c4 = pg_loop.const 4
    %c12 = pg_loop.const 12
    %two_three = pg_loop.index add %c2, %c3
    %d2 = pg_loop.index div %i, %c2
    %d4 = pg_loop.index div %d2, %c2
    %a = pg_loop.index add %d4, %c2
    %b = pg_loop.index add %a, %c3
    %m2 = pg_loop.index mul %i, %c2
    %m6 = pg_loop.index mul %m2, %c3
    %mod12 = pg_loop.index mod %i, %c12
    %mod3 = pg_loop.index mod %mod12, %c3
    %x4 = pg_loop.index mul %i, %c4
    %x4m2 = pg_loop.index mod %x4, %c2
    pg_loop.store %v, %out[%b] : f32, !pg.buffer<128xf32>
    pg_loop.store %v, %out[%m6] : f32, !pg.buffer<128xf32>
    pg_loop.store %v, %out[%mod3] : f32, !pg.buffer<128xf32>
    pg_loop.store %v, %out[%x4m2] : f32, !pg.buffer<128xf32>
  }
}

// Bounds decide comparisons either way; an always-false mask makes the load its 'else'
// value. An undecided comparison stays.
// CHECK-LABEL: pg_loop.kernel @masks(
// CHECK:         pg_loop.reduce sum %[[J:.*]] = 0 to 8 : f32 {
// CHECK-NEXT:      %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:      %[[Z:.*]] = pg_uop.const 0.0 : f32
// CHECK-NEXT:      %[[U:.*]] = pg_loop.cmp lt %[[J]], %[[C4]]
// CHECK-NEXT:      %[[L:.*]] = pg_loop.load %{{.*}}[%[[J]]] if %[[U]] else 0.0
// CHECK-NEXT:      %[[S:.*]] = pg_uop.binary add %[[Z]], %[[L]] : f32
// CHECK-NEXT:      pg_loop.yield %[[S]] : f32
pg_loop.kernel @masks(%a: !pg.buffer<8xf32>, %out: !pg.buffer<1xf32>) {
  %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
    %c4 = pg_loop.const 4
    %c8 = pg_loop.const 8
    %c0 = pg_loop.const 0
    %big = pg_loop.cmp ge %j, %c8
    %none = pg_loop.load %a[%j] if %big else 0.0 : !pg.buffer<8xf32> -> f32
    %undecided = pg_loop.cmp lt %j, %c4
    %in = pg_loop.cmp ne %j, %c8
    %both = pg_loop.and %in, %undecided
    %some = pg_loop.load %a[%j] if %both else 0.0 : !pg.buffer<8xf32> -> f32
    %sum = pg_uop.binary add %none, %some : f32
    pg_loop.yield %sum : f32
  }
  %c0 = pg_loop.const 0
  pg_loop.store %s, %out[%c0] : f32, !pg.buffer<1xf32>
}

// A flat index split into (c, h, w) by a reshape and flattened again by another: the
// pieces add back to the index (`((x//7)%7)*7 + x%7` is `x%49`, `(x//49)*49 + x%49` is
// `x`), so the load is contiguous along %x.
// CHECK-LABEL: pg_loop.kernel @reflatten(
// CHECK:         %[[C:.*]] = pg_loop.const 1568
// CHECK-NEXT:    %[[R:.*]] = pg_loop.index mul %r, %[[C]]
// CHECK-NEXT:    %[[I:.*]] = pg_loop.index add %[[R]], %x
// CHECK-NEXT:    pg_loop.load %a[%[[I]]]
pg_loop.kernel @reflatten(%a: !pg.buffer<3136xf32>, %out: !pg.buffer<3136xf32>) {
  pg_loop.range %r = 0 to 2 global {
    pg_loop.range %x = 0 to 1568 global {
      %c49 = pg_loop.const 49
      %c7 = pg_loop.const 7
      %c1568 = pg_loop.const 1568
      %ch = pg_loop.index div %x, %c49
      %row7 = pg_loop.index div %x, %c7
      %h = pg_loop.index mod %row7, %c7
      %w = pg_loop.index mod %x, %c7
      %base = pg_loop.index mul %r, %c1568
      %chs = pg_loop.index mul %ch, %c49
      %t1 = pg_loop.index add %base, %chs
      %hs = pg_loop.index mul %h, %c7
      %t2 = pg_loop.index add %t1, %hs
      %at = pg_loop.index add %t2, %w
      %v = pg_loop.load %a[%at] : !pg.buffer<3136xf32> -> f32
      pg_loop.store %v, %out[%at] : f32, !pg.buffer<3136xf32>
    }
  }
}

// The pieces of a row index over a (2, 6) grid of rows of 8, scaled by the row length, add
// back to the row index times it: (x//6)*48 + (x%6)*8 == x*8 (alone and inside a sum); a
// scale that is not the row length times the grid's inner size stays.
// CHECK-LABEL: pg_loop.kernel @rows(
// CHECK:           %hi = pg_loop.index div %x
// CHECK:           %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:      %[[X8:.*]] = pg_loop.index mul %x, %[[C8]]
// CHECK-NEXT:      %v = pg_loop.load %a[%[[X8]]]
// CHECK-NEXT:      %[[C8B:.*]] = pg_loop.const 8
// CHECK-NEXT:      %[[Y:.*]] = pg_loop.index mul %x, %[[C8B]]
// CHECK-NEXT:      %[[S:.*]] = pg_loop.index add %r, %[[Y]]
// CHECK-NEXT:      %w = pg_loop.load %a[%[[S]]]
// CHECK:           %h40 = pg_loop.index mul %hi
pg_loop.kernel @rows(%a: !pg.buffer<96xf32>, %out: !pg.buffer<36xf32>) {
  pg_loop.range %x = 0 to 12 global {
    pg_loop.range %r = 0 to 3 global {
      %c6 = pg_loop.const 6
      %c48 = pg_loop.const 48
      %c8 = pg_loop.const 8
      %hi = pg_loop.index div %x, %c6
      %lo = pg_loop.index mod %x, %c6
      %h48 = pg_loop.index mul %hi, %c48
      %l8 = pg_loop.index mul %lo, %c8
      %i = pg_loop.index add %h48, %l8
      %v = pg_loop.load %a[%i] : !pg.buffer<96xf32> -> f32
      %rh = pg_loop.index add %r, %h48
      %j = pg_loop.index add %rh, %l8
      %w = pg_loop.load %a[%j] : !pg.buffer<96xf32> -> f32
      %c40 = pg_loop.const 40
      %h40 = pg_loop.index mul %hi, %c40
      %k = pg_loop.index add %h40, %l8
      %u = pg_loop.load %a[%k] : !pg.buffer<96xf32> -> f32
      %vw = pg_uop.binary add %v, %w : f32
      %s = pg_uop.binary add %vw, %u : f32
      %c3 = pg_loop.const 3
      %o = pg_loop.index mul %x, %c3
      %oi = pg_loop.index add %o, %r
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<36xf32>
    }
  }
}

// Rows of 4 read back 8 at a time (two rows): (i*4 + j) // 8 is i // 2 and (i*4 + j) % 8
// is (i % 2)*4 + j, with j < 4, so the index is affine in j again (an LSTM's gate rows
// with their halves swapped).
// CHECK-LABEL: pg_loop.kernel @row_blocks(
// CHECK:           %[[Q:.*]] = pg_loop.index div %[[I:.*]], %{{.*}}
// CHECK:           %[[R:.*]] = pg_loop.index mod %[[I]], %{{.*}}
// CHECK-NOT:       pg_loop.index div
// CHECK:           pg_loop.store
pg_loop.kernel @row_blocks(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
  pg_loop.range %i = 0 to 4 global {
    pg_loop.range %j = 0 to 4 global {
      %c4 = pg_loop.const 4
      %c8 = pg_loop.const 8
      %row = pg_loop.index mul %i, %c4
      %at = pg_loop.index add %row, %j
      %q = pg_loop.index div %at, %c8
      %r = pg_loop.index mod %at, %c8
      %q8 = pg_loop.index mul %q, %c8
      %swap = pg_loop.index sub %c8, %q8
      %idx = pg_loop.index add %swap, %r
      %v = pg_loop.load %a[%idx] : !pg.buffer<16xf32> -> f32
      pg_loop.store %v, %out[%at] : f32, !pg.buffer<16xf32>
    }
  }
}
