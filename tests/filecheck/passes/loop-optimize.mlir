// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=64 registers=32}' | filecheck %s --check-prefix=AVX512
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=32 registers=16}' | filecheck %s --check-prefix=AVX2
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=16 registers=16}' | filecheck %s --check-prefix=SSE
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=64 registers=32 big-work=4194304}' | filecheck %s --check-prefix=SMALL
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=64 registers=32 cache-bytes=131072}' | filecheck %s --check-prefix=CACHE
// RUN: opt-tool %s -p 'loop-optimize{vector-bytes=64 registers=32 min-work=16384}' | filecheck %s --check-prefix=TINY

// A 64 x 512 matmul (K = 64). With 32
// registers of 16 floats, the widest column tile that leaves 4 of them is 64 columns; the
// column tiles become the outer loop, and then 6 rows (24 accumulators, 4 vectors of B and
// a broadcast: 29 registers) with the 4 rows left in a tile of their own inside each column
// tile; with 16 registers of 8 floats 6 x 16 (12 + 2 + 1), with 4 floats a register 6 x 8.
// AVX512-LABEL: pg_loop.kernel @mm(
// AVX512-SAME:    pg.schedule = "split(1, 64, upcast); interchange(0); split(1, 6, upcast); split(4, 4, upcast)"
// AVX512-NEXT:    pg_loop.range %{{.*}} = 0 to 8 global {
// AVX512-NEXT:      pg_loop.range %{{.*}} = 0 to 10 global {
// AVX512-NEXT:        pg_loop.range %{{.*}} = 0 to 6 upcast {
// AVX512:               pg_loop.range %{{.*}} = 0 to 64 upcast {
// AVX512:             pg_loop.range %{{.*}} = 0 to 1 global {
// AVX512-NEXT:          pg_loop.range %{{.*}} = 0 to 4 upcast {
// AVX2-LABEL: pg_loop.kernel @mm(
// AVX2-SAME:    pg.schedule = "split(1, 16, upcast); interchange(0); split(1, 6, upcast); split(4, 4, upcast)"
// SSE-LABEL: pg_loop.kernel @mm(
// SSE-SAME:    pg.schedule = "split(1, 8, upcast); interchange(0); split(1, 6, upcast); split(4, 4, upcast)"

// With big-work=2^22, kernels of fewer multiply-adds (this one has 2^21) get 8 columns.
// SMALL-LABEL: pg_loop.kernel @mm(
// SMALL-SAME:    pg.schedule = "split(1, 8, upcast); split(0, 4, upcast); interchange(1)"

// 128 columns: 4 vectors of 16 would leave 2 column tiles, 2 vectors leave 4.
// AVX512-LABEL: pg_loop.kernel @mm128(
// AVX512-SAME:    pg.schedule = "split(1, 32, upcast); interchange(0); split(1, 6, upcast); split(4, 4, upcast)"

// K = 256: the tile's 256 x 64 panel of B is 64 KiB, more than a quarter of a 128 KiB
// cache; an eighth holds 64 rows of it: K is blocked by 64, the block loop inside the
// column tiles, around the row tiles. Without cache-bytes (or with 1 MiB) it is not.
// CACHE-LABEL: pg_loop.kernel @mm_deep(
// CACHE-SAME:    pg.schedule = "split(1, 64, upcast); interchange(0); split(1, 4, upcast); block_reduce(0, 64, 0)"
// CACHE-NEXT:    pg_loop.range %{{.*}} = 0 to 8 global {
// CACHE-NEXT:      pg_loop.range %r_block = 0 to 4 loop {
// CACHE-NEXT:        pg_loop.range %{{.*}} = 0 to 2 global {
// CACHE:               %s = pg_loop.reduce sum %r_in = 0 to 64 : f32 {
// CACHE:               pg_loop.load %out[%{{.*}}] if %{{.*}} else 0.0
// AVX512-LABEL: pg_loop.kernel @mm_deep(
// AVX512-SAME:    pg.schedule = "split(1, 64, upcast); interchange(0); split(1, 4, upcast)"

// A row reduction too short for vector lanes gets 8 rows at once; with min-work above its
// 64 x 16 iterations it stays as it is (its sums add in the same order either way).
// AVX512-LABEL: pg_loop.kernel @rows(
// AVX512-SAME:    pg.schedule = "split(0, 8, upcast)"
// TINY-LABEL:   pg_loop.kernel @rows(
// TINY-NOT:       pg.schedule
// TINY-NOT:       upcast
// TINY:         pg_loop.kernel @softmax_stats(

// A long contiguous row sum (of exp: vectorisable) and a row max compute in vector lanes:
// 16 partial results per row with 64-byte vectors, 8 with 32-byte ones; the last reduce is
// split first, so the numbers name the reduces as they are.
// AVX512-LABEL: pg_loop.kernel @softmax_stats(
// AVX512-SAME:    pg.schedule = "split_reduce(1, 16); split_reduce(0, 16)"
// AVX2-LABEL: pg_loop.kernel @softmax_stats(
// AVX2-SAME:    pg.schedule = "split_reduce(1, 8); split_reduce(0, 8)"
// Fewer than min-work iterations too (8 x 1024), but a sum that splits into lanes: split
// as without min-work (untiled, it would add in another order).
// TINY-SAME:    pg.schedule = "split_reduce(1, 16); split_reduce(0, 16)"

// x @ w.T: along the columns w is read 64 apart (no vector form), but the reduce reads both
// operands along itself: the reduce computes in vector lanes (dot products). The rows move
// inside the columns (each row of w is read once, the 32 rows of x stay in cache), then an
// 8 x 2 tile of dot products shares each load (AVX-512: 16 accumulators); with 16
// registers, 8 x 1.
// AVX512-LABEL: pg_loop.kernel @mm_wt(
// AVX512-SAME:    pg.schedule = "interchange(0); split(1, 8, upcast); split(0, 2, upcast); interchange(1); split_reduce(0, 16)"
// AVX512-NEXT:    pg_loop.range %{{.*}} = 0 to 32 global {
// AVX512-NEXT:      pg_loop.range %{{.*}} = 0 to 4 global {
// AVX512-NEXT:        pg_loop.range %{{.*}} = 0 to 2 upcast {
// AVX512:                 pg_loop.range %{{.*}} = 0 to 8 upcast {
// AVX2-LABEL: pg_loop.kernel @mm_wt(
// AVX2-SAME:    pg.schedule = "interchange(0); split(1, 8, upcast); split_reduce(0, 8)"
// A vector-matrix product (one row of x times B, no range of rows around the columns):
// one accumulator per column and as many columns as half the registers hold while 8
// column tiles are left (with AVX-512 16 vectors, 256 columns; with AVX2 8 x 8 = 64), so each step
// of the reduce reads a long contiguous piece of a row of B.
// AVX512-LABEL: pg_loop.kernel @vecmat(
// AVX512-SAME:    pg.schedule = "split(0, 256, upcast)"
// AVX2-LABEL: pg_loop.kernel @vecmat(
// AVX2-SAME:    pg.schedule = "split(0, 64, upcast)"
// A dot product of 840 = 8 x 105: 16 lanes do not divide it, 8 do.
// AVX512-LABEL: pg_loop.kernel @dot840(
// AVX512-SAME:    pg.schedule = "split_reduce(0, 8)"
// A range the kernel divides by 2 (a 2 x 2 pool's window rows) is unflattened into the
// row pairs and the 2 taps: no division is left. Its rows of 8 are shorter than a 16-lane
// register: they take 8 lanes (half a register) instead.
// AVX512-LABEL: pg_loop.kernel @windows(
// AVX512-SAME:    pg.schedule = "unflatten(0, 2); split(2, 8, upcast)"
// AVX512-NOT:     div
// AVX512-NOT:     mod
// An elementwise kernel whose innermost range's body has a vector form (a relu is a max)
// gets one vector of lanes there, with a scalar remainder (40 = 2 x 16 + 8); a comparison
// has no vector form (its ranges only collapse), and a top-level range the lanes do not
// divide stays whole (the threads split it).
// AVX512-LABEL: pg_loop.kernel @bias_relu(
// AVX512-SAME:    pg.schedule = "split(1, 16, upcast)"
// AVX512-NEXT:    pg_loop.range %i = 0 to 8 global {
// AVX512-NEXT:      pg_loop.range %j_o = 0 to 2 global {
// AVX512-NEXT:        pg_loop.range %j_upcast = 0 to 16 upcast {
// AVX512:           pg_loop.range %{{.*}} = 32 to 40 global {
// AVX2-LABEL: pg_loop.kernel @bias_relu(
// AVX2-SAME:    pg.schedule = "split(1, 8, upcast)"
// AVX512-LABEL: pg_loop.kernel @mask(
// AVX512-SAME:    pg.schedule = "collapse(0)"
// AVX512-NOT:     upcast
// AVX512-LABEL: pg_loop.kernel @flat(
// AVX512-NOT:     upcast
pg_loop.kernel @mm(%a: !pg.buffer<4096xf32>, %b: !pg.buffer<32768xf32>, %out: !pg.buffer<32768xf32>) {
  pg_loop.range %i0 = 0 to 64 global {
    pg_loop.range %i1 = 0 to 512 global {
      %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
        %ck = pg_loop.const 64
        %cn = pg_loop.const 512
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<4096xf32> -> f32
        %br = pg_loop.index mul %r, %cn
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<32768xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 512
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<32768xf32>
    }
  }
}

pg_loop.kernel @mm128(%a: !pg.buffer<4096xf32>, %b: !pg.buffer<8192xf32>, %out: !pg.buffer<8192xf32>) {
  pg_loop.range %i0 = 0 to 64 global {
    pg_loop.range %i1 = 0 to 128 global {
      %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
        %ck = pg_loop.const 64
        %cn = pg_loop.const 128
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<4096xf32> -> f32
        %br = pg_loop.index mul %r, %cn
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<8192xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 128
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<8192xf32>
    }
  }
}


pg_loop.kernel @mm_deep(%a: !pg.buffer<2048xf32>, %b: !pg.buffer<131072xf32>, %out: !pg.buffer<4096xf32>) {
  pg_loop.range %i0 = 0 to 8 global {
    pg_loop.range %i1 = 0 to 512 global {
      %s = pg_loop.reduce sum %r = 0 to 256 : f32 {
        %ck = pg_loop.const 256
        %cn = pg_loop.const 512
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<2048xf32> -> f32
        %br = pg_loop.index mul %r, %cn
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<131072xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 512
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<4096xf32>
    }
  }
}

pg_loop.kernel @rows(%a: !pg.buffer<1024xf32>, %out: !pg.buffer<64xf32>) {
  pg_loop.range %i = 0 to 64 global {
    %s = pg_loop.reduce max %r = 0 to 16 : f32 {
      %c16 = pg_loop.const 16
      %row = pg_loop.index mul %i, %c16
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<1024xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<64xf32>
  }
}

pg_loop.kernel @softmax_stats(%a: !pg.buffer<8192xf32>, %out: !pg.buffer<8xf32>) {
  pg_loop.range %i = 0 to 8 global {
    %m = pg_loop.reduce max %r = 0 to 1024 : f32 {
      %c = pg_loop.const 1024
      %row = pg_loop.index mul %i, %c
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<8192xf32> -> f32
      pg_loop.yield %x : f32
    }
    %s = pg_loop.reduce sum %q = 0 to 1024 : f32 {
      %c2 = pg_loop.const 1024
      %row2 = pg_loop.index mul %i, %c2
      %at2 = pg_loop.index add %row2, %q
      %y = pg_loop.load %a[%at2] : !pg.buffer<8192xf32> -> f32
      %d = pg_uop.binary sub %y, %m : f32
      %e = pg_uop.unary exp %d : f32
      pg_loop.yield %e : f32
    }
    %t = pg_uop.binary add %m, %s : f32
    pg_loop.store %t, %out[%i] : f32, !pg.buffer<8xf32>
  }
}

pg_loop.kernel @mm_wt(%x: !pg.buffer<2048xf32>, %w: !pg.buffer<4096xf32>, %out: !pg.buffer<2048xf32>) {
  pg_loop.range %i = 0 to 32 global {
    pg_loop.range %j = 0 to 64 global {
      %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
        %c64 = pg_loop.const 64
        %xr = pg_loop.index mul %i, %c64
        %xi = pg_loop.index add %xr, %r
        %a = pg_loop.load %x[%xi] : !pg.buffer<2048xf32> -> f32
        %wr = pg_loop.index mul %j, %c64
        %wi = pg_loop.index add %wr, %r
        %b = pg_loop.load %w[%wi] : !pg.buffer<4096xf32> -> f32
        %ab = pg_uop.binary mul %a, %b : f32
        pg_loop.yield %ab : f32
      }
      %c64o = pg_loop.const 64
      %or = pg_loop.index mul %i, %c64o
      %oi = pg_loop.index add %or, %j
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<2048xf32>
    }
  }
}

pg_loop.kernel @vecmat(%x: !pg.buffer<16xf32>, %b: !pg.buffer<65536xf32>, %out: !pg.buffer<4096xf32>) {
  pg_loop.range %j = 0 to 4096 global {
    %s = pg_loop.reduce sum %r = 0 to 16 : f32 {
      %a = pg_loop.load %x[%r] : !pg.buffer<16xf32> -> f32
      %c4096 = pg_loop.const 4096
      %br = pg_loop.index mul %r, %c4096
      %bi = pg_loop.index add %br, %j
      %v = pg_loop.load %b[%bi] : !pg.buffer<65536xf32> -> f32
      %av = pg_uop.binary mul %a, %v : f32
      pg_loop.yield %av : f32
    }
    pg_loop.store %s, %out[%j] : f32, !pg.buffer<4096xf32>
  }
}

pg_loop.kernel @dot840(%a: !pg.buffer<3360xf32>, %b: !pg.buffer<3360xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %s = pg_loop.reduce sum %r = 0 to 840 : f32 {
      %c = pg_loop.const 840
      %row = pg_loop.index mul %i, %c
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<3360xf32> -> f32
      %y = pg_loop.load %b[%at] : !pg.buffer<3360xf32> -> f32
      %xy = pg_uop.binary mul %x, %y : f32
      pg_loop.yield %xy : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
  }
}

pg_loop.kernel @windows(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>) {
  pg_loop.range %h = 0 to 8 global {
    pg_loop.range %w = 0 to 8 global {
      %c2 = pg_loop.const 2
      %c8 = pg_loop.const 8
      %row = pg_loop.index div %h, %c2
      %tap = pg_loop.index mod %h, %c2
      %c4 = pg_loop.const 4
      %r4 = pg_loop.index mul %row, %c4
      %t32 = pg_loop.const 32
      %tt = pg_loop.index mul %tap, %t32
      %at0 = pg_loop.index add %r4, %tt
      %at = pg_loop.index add %at0, %w
      %x = pg_loop.load %a[%at] : !pg.buffer<64xf32> -> f32
      %o0 = pg_loop.index mul %h, %c8
      %o = pg_loop.index add %o0, %w
      pg_loop.store %x, %out[%o] : f32, !pg.buffer<64xf32>
    }
  }
}

pg_loop.kernel @bias_relu(%a: !pg.buffer<320xf32>, %b: !pg.buffer<8xf32>, %out: !pg.buffer<320xf32>) {
  pg_loop.range %i = 0 to 8 global {
    pg_loop.range %j = 0 to 40 global {
      %c40 = pg_loop.const 40
      %r = pg_loop.index mul %i, %c40
      %at = pg_loop.index add %r, %j
      %x = pg_loop.load %a[%at] : !pg.buffer<320xf32> -> f32
      %y = pg_loop.load %b[%i] : !pg.buffer<8xf32> -> f32
      %s = pg_uop.binary add %x, %y : f32
      %z = pg_uop.const 0.0 : f32
      %m = pg_uop.binary max %s, %z : f32
      pg_loop.store %m, %out[%at] : f32, !pg.buffer<320xf32>
    }
  }
}

pg_loop.kernel @mask(%a: !pg.buffer<320xf32>, %out: !pg.buffer<320xf32>) {
  pg_loop.range %i = 0 to 8 global {
    pg_loop.range %j = 0 to 40 global {
      %c40 = pg_loop.const 40
      %r = pg_loop.index mul %i, %c40
      %at = pg_loop.index add %r, %j
      %x = pg_loop.load %a[%at] : !pg.buffer<320xf32> -> f32
      %z = pg_uop.const 0.0 : f32
      %c = pg_uop.cmp gt %x, %z : f32
      %m = pg_uop.where %c, %x, %z : f32
      pg_loop.store %m, %out[%at] : f32, !pg.buffer<320xf32>
    }
  }
}

pg_loop.kernel @flat(%a: !pg.buffer<100xf32>, %out: !pg.buffer<100xf32>) {
  pg_loop.range %i = 0 to 100 global {
    %x = pg_loop.load %a[%i] : !pg.buffer<100xf32> -> f32
    %z = pg_uop.const 0.0 : f32
    %m = pg_uop.binary max %x, %z : f32
    pg_loop.store %m, %out[%i] : f32, !pg.buffer<100xf32>
  }
}

// A 1-D convolution with two taps, as conv2d's reduce (8 output channels, 64 positions, 8
// input channels): each reduce step loads two column vectors (x at i and i + 1), so the
// tile is one vector of columns (4 x 64 would hold 4 vectors per tap) and 8 rows, whose
// tiles stay the outer loop. With 16 registers of 8 floats, 8 rows + 2 taps + a broadcast
// fit too.
// AVX512-LABEL: pg_loop.kernel @conv(
// AVX512-SAME:    pg.schedule = "split(1, 16, upcast); split(0, 8, upcast); interchange(1)"
// AVX512-NEXT:    pg_loop.range %{{.*}} = 0 to 1 global {
// AVX512-NEXT:      pg_loop.range %{{.*}} = 0 to 4 global {
// AVX512-NEXT:        pg_loop.range %{{.*}} = 0 to 8 upcast {
// AVX512:               pg_loop.range %{{.*}} = 0 to 16 upcast {
// AVX2-LABEL: pg_loop.kernel @conv(
// AVX2-SAME:    pg.schedule = "split(1, 8, upcast); split(0, 8, upcast); interchange(1)"
pg_loop.kernel @conv(%x: !pg.buffer<520xf32>, %w: !pg.buffer<128xf32>, %out: !pg.buffer<512xf32>) {
  pg_loop.range %o = 0 to 8 global {
    pg_loop.range %i = 0 to 64 global {
      %s = pg_loop.reduce sum %c = 0 to 8 : f32 {
        %c65 = pg_loop.const 65
        %c16 = pg_loop.const 16
        %c2 = pg_loop.const 2
        %c1 = pg_loop.const 1
        %row = pg_loop.index mul %c, %c65
        %x0i = pg_loop.index add %row, %i
        %x1i = pg_loop.index add %x0i, %c1
        %x0 = pg_loop.load %x[%x0i] : !pg.buffer<520xf32> -> f32
        %x1 = pg_loop.load %x[%x1i] : !pg.buffer<520xf32> -> f32
        %wo = pg_loop.index mul %o, %c16
        %wc = pg_loop.index mul %c, %c2
        %w0i = pg_loop.index add %wo, %wc
        %w1i = pg_loop.index add %w0i, %c1
        %w0 = pg_loop.load %w[%w0i] : !pg.buffer<128xf32> -> f32
        %w1 = pg_loop.load %w[%w1i] : !pg.buffer<128xf32> -> f32
        %p0 = pg_uop.binary mul %x0, %w0 : f32
        %p1 = pg_uop.binary mul %x1, %w1 : f32
        %p = pg_uop.binary add %p0, %p1 : f32
        pg_loop.yield %p : f32
      }
      %c64 = pg_loop.const 64
      %oi = pg_loop.index mul %o, %c64
      %at = pg_loop.index add %oi, %i
      pg_loop.store %s, %out[%at] : f32, !pg.buffer<512xf32>
    }
  }
}

// A batched matmul with a 2-D right operand, (2, 6, 8) x (8, 128): its (batch, row) ranges
// read and write rows only as batch * 6 + row, so they collapse into 12 rows (no division
// is left), which the register tile then takes (6 rows alone would get 2).
// AVX512-LABEL: pg_loop.kernel @bmm(
// AVX512-SAME:    pg.schedule = "collapse(0); split(1, 32, upcast); interchange(0); split(1, 6, upcast)"
// AVX512-NOT:     div
// AVX512-NOT:     mod
pg_loop.kernel @bmm(%a: !pg.buffer<96xf32>, %b: !pg.buffer<1024xf32>, %out: !pg.buffer<1536xf32>) {
  pg_loop.range %i0 = 0 to 2 global {
    pg_loop.range %i1 = 0 to 6 global {
      pg_loop.range %i2 = 0 to 128 global {
        %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
          %c48 = pg_loop.const 48
          %c8 = pg_loop.const 8
          %a0 = pg_loop.index mul %i0, %c48
          %a1 = pg_loop.index mul %i1, %c8
          %a01 = pg_loop.index add %a0, %a1
          %ai = pg_loop.index add %a01, %r
          %x = pg_loop.load %a[%ai] : !pg.buffer<96xf32> -> f32
          %c128 = pg_loop.const 128
          %br = pg_loop.index mul %r, %c128
          %bi = pg_loop.index add %br, %i2
          %y = pg_loop.load %b[%bi] : !pg.buffer<1024xf32> -> f32
          %xy = pg_uop.binary mul %x, %y : f32
          pg_loop.yield %xy : f32
        }
        %c768 = pg_loop.const 768
        %n = pg_loop.const 128
        %o0 = pg_loop.index mul %i0, %c768
        %o1 = pg_loop.index mul %i1, %n
        %o01 = pg_loop.index add %o0, %o1
        %oi = pg_loop.index add %o01, %i2
        pg_loop.store %s, %out[%oi] : f32, !pg.buffer<1536xf32>
      }
    }
  }
}

// @mm with B in column panels of 64 (matmul-layout{panel-cols=64}: B[r, j] at
// (j // 64) * 4096 + r * 64 + j % 64). AVX-512: the panels are the tile's columns, so the
// column range is not unflattened but split as in @mm, and the index simplifies to the
// tile's panel and its lanes (no division left): each step of r reads the next 64
// elements of one panel. AVX2's tile has 16 columns (4 x 64 would not fit its registers):
// the range is unflattened instead.
// AVX512-LABEL: pg_loop.kernel @mm_panels(
// AVX512-SAME:    pg.schedule = "split(1, 64, upcast); interchange(0); split(1, 6, upcast); split(4, 4, upcast)"
// AVX512-NOT:     pg_loop.index {{div|mod}}
// AVX512:         %bp = pg_loop.index mul %i1_o, %cp
// AVX512-NOT:     pg_loop.index {{div|mod}}
// AVX512:         %bi = pg_loop.index add %bk, %i1_upcast
// AVX512-NOT:     pg_loop.index {{div|mod}}
// AVX2-LABEL: pg_loop.kernel @mm_panels(
// AVX2-SAME:    pg.schedule = "unflatten(1, 64);
pg_loop.kernel @mm_panels(%a: !pg.buffer<4096xf32>, %b: !pg.buffer<32768xf32>, %out: !pg.buffer<32768xf32>) {
  pg_loop.range %i0 = 0 to 64 global {
    pg_loop.range %i1 = 0 to 512 global {
      %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
        %ck = pg_loop.const 64
        %cp = pg_loop.const 4096
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<4096xf32> -> f32
        %jt = pg_loop.index div %i1, %ck
        %jl = pg_loop.index mod %i1, %ck
        %bp = pg_loop.index mul %jt, %cp
        %br = pg_loop.index mul %r, %ck
        %bk = pg_loop.index add %bp, %br
        %bi = pg_loop.index add %bk, %jl
        %y = pg_loop.load %b[%bi] : !pg.buffer<32768xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 512
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<32768xf32>
    }
  }
}

// @mm_deep with B in column panels: the 256 x 64 panel is contiguous and streams through
// the prefetchers, so K is not blocked for the 128 KiB cache (as @mm_deep is); the kernel
// records the panels' width (DEBUG=2 shows it).
// CACHE-LABEL: pg_loop.kernel @mm_deep_panels(
// CACHE-SAME:    pg.schedule = "split(1, 64, upcast); interchange(0); split(1, 4, upcast)", pg.b_panels = #builtin.int<64>
// CACHE-NOT:     loop {
pg_loop.kernel @mm_deep_panels(%a: !pg.buffer<2048xf32>, %b: !pg.buffer<131072xf32>, %out: !pg.buffer<4096xf32>) {
  pg_loop.range %i0 = 0 to 8 global {
    pg_loop.range %i1 = 0 to 512 global {
      %s = pg_loop.reduce sum %r = 0 to 256 : f32 {
        %ck = pg_loop.const 256
        %cw = pg_loop.const 64
        %cp = pg_loop.const 16384
        %ar = pg_loop.index mul %i0, %ck
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<2048xf32> -> f32
        %jt = pg_loop.index div %i1, %cw
        %jl = pg_loop.index mod %i1, %cw
        %bp = pg_loop.index mul %jt, %cp
        %br = pg_loop.index mul %r, %cw
        %bk = pg_loop.index add %bp, %br
        %bi = pg_loop.index add %bk, %jl
        %y = pg_loop.load %b[%bi] : !pg.buffer<131072xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 512
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<4096xf32>
    }
  }
}

// A 2 x 2 max pool's rows of 14 outputs (the window too short to tile, its taps two
// floats apart per output: no vector form) are unrolled whole (`window_rows.py`); rows of 7
// are left alone.
// AVX512-LABEL: pg_loop.kernel @pool_rows(
// AVX512-SAME:    pg.schedule = "split(1, 14, upcast)"
// AVX512:         pg_loop.range %{{.*}} = 0 to 14 upcast {
// AVX512:             pg_loop.reduce max
// AVX512-LABEL: pg_loop.kernel @pool_short_rows(
// AVX512-NOT:     pg.schedule
pg_loop.kernel @pool_rows(%a: !pg.buffer<784xf32>, %out: !pg.buffer<196xf32>) {
  pg_loop.range %i = 0 to 14 global {
    pg_loop.range %j = 0 to 14 global {
      %m = pg_loop.reduce max %r = 0 to 4 : f32 {
        %c2 = pg_loop.const 2
        %c28 = pg_loop.const 28
        %dr = pg_loop.index div %r, %c2
        %dc = pg_loop.index mod %r, %c2
        %i2 = pg_loop.index mul %i, %c2
        %row = pg_loop.index add %i2, %dr
        %j2 = pg_loop.index mul %j, %c2
        %col = pg_loop.index add %j2, %dc
        %rw = pg_loop.index mul %row, %c28
        %at = pg_loop.index add %rw, %col
        %x = pg_loop.load %a[%at] : !pg.buffer<784xf32> -> f32
        pg_loop.yield %x : f32
      }
      %c14 = pg_loop.const 14
      %o = pg_loop.index mul %i, %c14
      %oi = pg_loop.index add %o, %j
      pg_loop.store %m, %out[%oi] : f32, !pg.buffer<196xf32>
    }
  }
}

pg_loop.kernel @pool_short_rows(%a: !pg.buffer<196xf32>, %out: !pg.buffer<49xf32>) {
  pg_loop.range %i = 0 to 7 global {
    pg_loop.range %j = 0 to 7 global {
      %m = pg_loop.reduce max %r = 0 to 4 : f32 {
        %c2 = pg_loop.const 2
        %c14 = pg_loop.const 14
        %dr = pg_loop.index div %r, %c2
        %dc = pg_loop.index mod %r, %c2
        %i2 = pg_loop.index mul %i, %c2
        %row = pg_loop.index add %i2, %dr
        %j2 = pg_loop.index mul %j, %c2
        %col = pg_loop.index add %j2, %dc
        %rw = pg_loop.index mul %row, %c14
        %at = pg_loop.index add %rw, %col
        %x = pg_loop.load %a[%at] : !pg.buffer<196xf32> -> f32
        pg_loop.yield %x : f32
      }
      %c7 = pg_loop.const 7
      %o = pg_loop.index mul %i, %c7
      %oi = pg_loop.index add %o, %j
      pg_loop.store %m, %out[%oi] : f32, !pg.buffer<49xf32>
    }
  }
}
