// convert-sched-to-loop: the stored tensor's shape becomes nested global ranges (size-1 dims
// get none), movement ops become index arithmetic on the load offset (reshape re-linearises,
// permute swaps, expand reads index 0, slice is start + step * i, flip is n - 1 - i), pad
// becomes a masked load (or a select when an ALU op sits between pad and load), and a reduce
// becomes one pg_loop.reduce per reduced axis of size > 1, on inner or outer axes, with the
// kept size-1 dims indexed by 0.
// RUN: opt-tool %s --split-input-file -p convert-sched-to-loop | filecheck %s

// reshape [2,3,4] -> [6,4] then permute: x[i1 / 3, i1 % 3, i0] for output [i0, i1], whose
// offset (i1 / 3) * 12 + (i1 % 3) * 4 + i0 folds to i1 * 4 + i0 as it is emitted.
// CHECK-LABEL: pg_loop.kernel @reshape_permute(%a: !pg.buffer<24xf32>, %out: !pg.buffer<24xf32>) {
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %i1 = 0 to 6 global {
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[S:.*]] = pg_loop.index mul %i1, %[[C4]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[S]], %i0
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%[[OFF]]] : !pg.buffer<24xf32> -> f32
// CHECK-NEXT:        %[[C6:.*]] = pg_loop.const 6
// CHECK-NEXT:        %[[O:.*]] = pg_loop.index mul %i0, %[[C6]]
// CHECK-NEXT:        %[[OUT:.*]] = pg_loop.index add %[[O]], %i1
// CHECK-NEXT:        pg_loop.store %[[V]], %out[%[[OUT]]] : f32, !pg.buffer<24xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

pg_sched.kernel @reshape_permute(%a: !pg.buffer<24xf32>, %out: !pg.buffer<24xf32>) {
  %x = pg_sched.load %a : !pg.buffer<24xf32> -> tensor<2x3x4xf32>
  %r = pg_tensor.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %p = pg_tensor.permute %r {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  pg_sched.store %p, %out : tensor<4x6xf32>, !pg.buffer<24xf32>
}

// -----
// A reshape that does not undo a split keeps its div and mod: [6] -> [2, 3] read as [3, 2].
// CHECK-LABEL: pg_loop.kernel @reshape_split(
// CHECK:         pg_loop.index div
// CHECK:         pg_loop.index mod
// CHECK:         pg_loop.load
pg_sched.kernel @reshape_split(%a: !pg.buffer<6xf32>, %out: !pg.buffer<6xf32>) {
  %x = pg_sched.load %a : !pg.buffer<6xf32> -> tensor<2x3xf32>
  %p = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %r = pg_tensor.reshape %p : tensor<3x2xf32> -> tensor<6xf32>
  pg_sched.store %r, %out : tensor<6xf32>, !pg.buffer<6xf32>
}


// -----
// expand: the broadcast dim reads index 0, so the load offset is i1 alone.
// CHECK-LABEL: pg_loop.kernel @expand(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 3 global {
// CHECK-NEXT:      pg_loop.range %i1 = 0 to 4 global {
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%i1] : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[O:.*]] = pg_loop.index mul %i0, %[[C4]]
// CHECK-NEXT:        %[[OUT:.*]] = pg_loop.index add %[[O]], %i1
// CHECK-NEXT:        pg_loop.store %[[V]], %out[%[[OUT]]] : f32, !pg.buffer<12xf32>
pg_sched.kernel @expand(%a: !pg.buffer<4xf32>, %out: !pg.buffer<12xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<1x4xf32>
  %e = pg_tensor.expand %x : tensor<1x4xf32> -> tensor<3x4xf32>
  pg_sched.store %e, %out : tensor<3x4xf32>, !pg.buffer<12xf32>
}

// -----
// slice start [1, 1] step [1, 3]: x[1 + i0, 1 + 3 * i1].
// CHECK-LABEL: pg_loop.kernel @slice(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 3 global {
// CHECK-NEXT:      pg_loop.range %i1 = 0 to 2 global {
// CHECK-NEXT:        %[[C1:.*]] = pg_loop.const 1
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index add %[[C1]], %i0
// CHECK-NEXT:        %[[C3:.*]] = pg_loop.const 3
// CHECK-NEXT:        %[[STEP:.*]] = pg_loop.index mul %i1, %[[C3]]
// CHECK-NEXT:        %[[COL:.*]] = pg_loop.index add %[[C1]], %[[STEP]]
// CHECK-NEXT:        %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[RO:.*]] = pg_loop.index mul %[[ROW]], %[[C8]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[RO]], %[[COL]]
// CHECK-NEXT:        %{{.*}} = pg_loop.load %a[%[[OFF]]] : !pg.buffer<32xf32> -> f32
pg_sched.kernel @slice(%a: !pg.buffer<32xf32>, %out: !pg.buffer<6xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %s = pg_tensor.slice %x {start = array<i64: 1, 1>, step = array<i64: 1, 3>} : tensor<4x8xf32> -> tensor<3x2xf32>
  pg_sched.store %s, %out : tensor<3x2xf32>, !pg.buffer<6xf32>
}

// -----
// flip axis 1: x[i0, 7 - i1]; the row offset i0 * 8 is shared with the store's offset.
// CHECK-LABEL: pg_loop.kernel @flip(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %i1 = 0 to 8 global {
// CHECK-NEXT:        %[[C7:.*]] = pg_loop.const 7
// CHECK-NEXT:        %[[COL:.*]] = pg_loop.index sub %[[C7]], %i1
// CHECK-NEXT:        %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index mul %i0, %[[C8]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[ROW]], %[[COL]]
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%[[OFF]]] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:        %[[OUT:.*]] = pg_loop.index add %[[ROW]], %i1
// CHECK-NEXT:        pg_loop.store %[[V]], %out[%[[OUT]]] : f32, !pg.buffer<32xf32>
pg_sched.kernel @flip(%a: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %f = pg_tensor.flip %x {axes = array<i64: 1>} : tensor<4x8xf32>
  pg_sched.store %f, %out : tensor<4x8xf32>, !pg.buffer<32xf32>
}

// -----
// pad low 1 high 2 directly over a load: a masked load whose other value is the pad value.
// CHECK-LABEL: pg_loop.kernel @pad(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 7 global {
// CHECK-NEXT:      %[[C1:.*]] = pg_loop.const 1
// CHECK-NEXT:      %[[SRC:.*]] = pg_loop.index sub %i0, %[[C1]]
// CHECK-NEXT:      %[[LO:.*]] = pg_loop.cmp ge %i0, %[[C1]]
// CHECK-NEXT:      %[[C5:.*]] = pg_loop.const 5
// CHECK-NEXT:      %[[HI:.*]] = pg_loop.cmp lt %i0, %[[C5]]
// CHECK-NEXT:      %[[M:.*]] = pg_loop.and %[[LO]], %[[HI]]
// CHECK-NEXT:      %[[V:.*]] = pg_loop.load %a[%[[SRC]]] if %[[M]] else 1.5 : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:      pg_loop.store %[[V]], %out[%i0] : f32, !pg.buffer<7xf32>
pg_sched.kernel @pad(%a: !pg.buffer<4xf32>, %out: !pg.buffer<7xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<4xf32>
  %p = pg_tensor.pad %x low [1] high [2] value 1.5 : tensor<4xf32> -> tensor<7xf32>
  pg_sched.store %p, %out : tensor<7xf32>, !pg.buffer<7xf32>
}

// -----
// pad over an ALU op: the load under it is still masked (it must not read out of bounds)
// and the pad value is selected by the mask.
// CHECK-LABEL: pg_loop.kernel @pad_exp(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 6 global {
// CHECK-NEXT:      %[[C2:.*]] = pg_loop.const 2
// CHECK-NEXT:      %[[SRC:.*]] = pg_loop.index sub %i0, %[[C2]]
// CHECK-NEXT:      %[[M:.*]] = pg_loop.cmp ge %i0, %[[C2]]
// CHECK-NEXT:      %[[V:.*]] = pg_loop.load %a[%[[SRC]]] if %[[M]] else 0.0 : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:      %[[E:.*]] = pg_uop.unary exp %[[V]] : f32
// CHECK-NEXT:      %[[F:.*]] = pg_uop.const -1.0 : f32
// CHECK-NEXT:      %[[W:.*]] = pg_uop.where %[[M]], %[[E]], %[[F]] : f32
// CHECK-NEXT:      pg_loop.store %[[W]], %out[%i0] : f32, !pg.buffer<6xf32>
pg_sched.kernel @pad_exp(%a: !pg.buffer<4xf32>, %out: !pg.buffer<6xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<4xf32>
  %e = pg_tensor.unary exp %x : tensor<4xf32>
  %p = pg_tensor.pad %e low [2] high [0] value -1.0 : tensor<4xf32> -> tensor<6xf32>
  pg_sched.store %p, %out : tensor<6xf32>, !pg.buffer<6xf32>
}

// -----
// reduce over the inner axis, keepdims: the size-1 output dim has no range.
// CHECK-LABEL: pg_loop.kernel @reduce_inner(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      %[[S:.*]] = pg_loop.reduce sum %r1 = 0 to 8 : f32 {
// CHECK-NEXT:        %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index mul %i0, %[[C8]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[ROW]], %r1
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%[[OFF]]] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:        pg_loop.yield %[[V]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.store %[[S]], %out[%i0] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pg_sched.kernel @reduce_inner(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
}

// -----
// reduce over the outer and the inner axis of [2, 3, 4]: one reduce over all 8 reduced
// elements in row-major order (one accumulation, as stage 1 defines it), its index split
// back into the two axes; the middle dim is the only range.
// CHECK-LABEL: pg_loop.kernel @reduce_outer(
// CHECK-NEXT:    pg_loop.range %i1 = 0 to 3 global {
// CHECK-NEXT:      %[[R:.*]] = pg_loop.reduce max %r0 = 0 to 8 : f32 {
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[A0:.*]] = pg_loop.index div %r0, %[[C4]]
// CHECK-NEXT:        %[[A2:.*]] = pg_loop.index mod %r0, %[[C4]]
// CHECK-NEXT:        %[[C12:.*]] = pg_loop.const 12
// CHECK-NEXT:        %[[O0:.*]] = pg_loop.index mul %[[A0]], %[[C12]]
// CHECK-NEXT:        %[[O1:.*]] = pg_loop.index mul %i1, %[[C4]]
// CHECK-NEXT:        %[[O01:.*]] = pg_loop.index add %[[O0]], %[[O1]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[O01]], %[[A2]]
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%[[OFF]]] : !pg.buffer<24xf32> -> f32
// CHECK-NEXT:        pg_loop.yield %[[V]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.store %[[R]], %out[%i1] : f32, !pg.buffer<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pg_sched.kernel @reduce_outer(%a: !pg.buffer<24xf32>, %out: !pg.buffer<3xf32>) {
  %x = pg_sched.load %a : !pg.buffer<24xf32> -> tensor<2x3x4xf32>
  %s = pg_tensor.reduce max %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  pg_sched.store %s, %out : tensor<1x3x1xf32>, !pg.buffer<3xf32>
}

// -----
// Contiguous reduced axes: the split index re-linearises to the reduce index itself.
// CHECK-LABEL: pg_loop.kernel @reduce_contiguous(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 2 global {
// CHECK-NEXT:      %[[R:.*]] = pg_loop.reduce sum %r1 = 0 to 12 : f32 {
// CHECK-NEXT:        %[[C12:.*]] = pg_loop.const 12
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index mul %i0, %[[C12]]
// CHECK-NEXT:        %[[OFF:.*]] = pg_loop.index add %[[ROW]], %r1
// CHECK-NEXT:        %[[V:.*]] = pg_loop.load %a[%[[OFF]]] : !pg.buffer<24xf32> -> f32
// CHECK-NEXT:        pg_loop.yield %[[V]] : f32
// CHECK-NEXT:      }
pg_sched.kernel @reduce_contiguous(%a: !pg.buffer<24xf32>, %out: !pg.buffer<2xf32>) {
  %x = pg_sched.load %a : !pg.buffer<24xf32> -> tensor<2x3x4xf32>
  %s = pg_tensor.reduce sum %x {axes = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  pg_sched.store %s, %out : tensor<2x1x1xf32>, !pg.buffer<2xf32>
}

// -----
// A reduce whose reduced axes have size 1 is no loop (the whole output is one element);
// a float sum keeps `0.0 + x`, so that -0.0 sums to +0.0 as from an accumulator.
// CHECK-LABEL: pg_loop.kernel @reduce_unit(
// CHECK-NEXT:    %[[C0:.*]] = pg_loop.const 0
// CHECK-NEXT:    %[[V:.*]] = pg_loop.load %a[%[[C0]]] : !pg.buffer<1xi32> -> i32
// CHECK-NEXT:    pg_loop.store %[[V]], %out[%[[C0]]] : i32, !pg.buffer<1xi32>
// CHECK-NEXT:  }
pg_sched.kernel @reduce_unit(%a: !pg.buffer<1xi32>, %out: !pg.buffer<1xi32>) {
  %x = pg_sched.load %a : !pg.buffer<1xi32> -> tensor<1x1xi32>
  %s = pg_tensor.reduce prod %x {axes = array<i64: 1>} : tensor<1x1xi32> -> tensor<1x1xi32>
  pg_sched.store %s, %out : tensor<1x1xi32>, !pg.buffer<1xi32>
}

// -----
// CHECK-LABEL: pg_loop.kernel @sum_unit(
// CHECK-NEXT:    %[[C0:.*]] = pg_loop.const 0
// CHECK-NEXT:    %[[V:.*]] = pg_loop.load %a[%[[C0]]] : !pg.buffer<1xf32> -> f32
// CHECK-NEXT:    %[[Z:.*]] = pg_uop.const 0.0 : f32
// CHECK-NEXT:    %[[S:.*]] = pg_uop.binary add %[[Z]], %[[V]] : f32
// CHECK-NEXT:    pg_loop.store %[[S]], %out[%[[C0]]] : f32, !pg.buffer<1xf32>
pg_sched.kernel @sum_unit(%a: !pg.buffer<1xf32>, %out: !pg.buffer<1xf32>) {
  %x = pg_sched.load %a : !pg.buffer<1xf32> -> tensor<1xf32>
  %s = pg_tensor.reduce sum %x {axes = array<i64: 0>} : tensor<1xf32> -> tensor<1xf32>
  pg_sched.store %s, %out : tensor<1xf32>, !pg.buffer<1xf32>
}

// -----
// A row-wise fused softmax: each reduce is emitted in the row loop (the outermost loop its
// index depends on), before the column loop, so it runs once per row; the sum's body reads
// the max, and the elementwise epilogue reads both.
// CHECK-LABEL: pg_loop.kernel @softmax(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      %[[M:.*]] = pg_loop.reduce max %r1 = 0 to 8 : f32 {
// CHECK:             pg_loop.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S:.*]] = pg_loop.reduce sum %[[R:.*]] = 0 to 8 : f32 {
// CHECK:             %[[D:.*]] = pg_uop.binary sub %{{.*}}, %[[M]] : f32
// CHECK-NEXT:        %[[E:.*]] = pg_uop.unary exp %[[D]] : f32
// CHECK-NEXT:        pg_loop.yield %[[E]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.range %i1 = 0 to 8 global {
// CHECK:             %[[D1:.*]] = pg_uop.binary sub %{{.*}}, %[[M]] : f32
// CHECK-NEXT:        %[[E1:.*]] = pg_uop.unary exp %[[D1]] : f32
// CHECK-NEXT:        %[[Q:.*]] = pg_uop.binary div %[[E1]], %[[S]] : f32
// CHECK-NEXT:        pg_loop.store %[[Q]], %out[%{{.*}}] : f32, !pg.buffer<32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pg_sched.kernel @softmax(%a: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<4x8xf32>
  %e = pg_tensor.unary exp %d : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %se = pg_tensor.expand %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = pg_tensor.binary div %e, %se : tensor<4x8xf32>
  pg_sched.store %r, %out : tensor<4x8xf32>, !pg.buffer<32xf32>
}

// -----
// A reduce read inside another reduce's body at the row index (a variance): it is emitted
// before that reduce, not in its body (which would recompute it per iteration).
// CHECK-LABEL: pg_loop.kernel @variance(
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      %[[M:.*]] = pg_loop.reduce sum %r1 = 0 to 8 : f32 {
// CHECK:             pg_loop.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[V:.*]] = pg_loop.reduce sum %{{.*}} = 0 to 8 : f32 {
// CHECK-NOT:         pg_loop.reduce
// CHECK:             pg_uop.binary sub %{{.*}}, %[[M]] : f32
// CHECK:             pg_loop.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.store %[[V]], %out[%i0] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pg_sched.kernel @variance(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %m = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<4x8xf32>
  %q = pg_tensor.binary mul %d, %d : tensor<4x8xf32>
  %v = pg_tensor.reduce sum %q {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  pg_sched.store %v, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
}

// -----
// The same with one row (an argmax's max read by the min over the candidates): the kernel
// has no output loop, and the inner reduce goes to its top, before the outer one, not into
// the outer one's body (which made argmax of n elements n * n work).
// CHECK-LABEL: pg_loop.kernel @one_row(
// CHECK-NEXT:    %{{.*}} = pg_loop.const 0
// CHECK-NEXT:    %[[M:.*]] = pg_loop.reduce max %r1 = 0 to 8 : f32 {
// CHECK:           pg_loop.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[V:.*]] = pg_loop.reduce sum %{{.*}} = 0 to 8 : f32 {
// CHECK-NOT:       pg_loop.reduce
// CHECK:           pg_uop.binary sub %{{.*}}, %[[M]] : f32
// CHECK:           pg_loop.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    pg_loop.store %[[V]], %out[%{{.*}}] : f32, !pg.buffer<1xf32>
// CHECK-NEXT:  }
pg_sched.kernel @one_row(%a: !pg.buffer<8xf32>, %out: !pg.buffer<1xf32>) {
  %x = pg_sched.load %a : !pg.buffer<8xf32> -> tensor<1x8xf32>
  %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<1x8xf32> -> tensor<1x1xf32>
  %me = pg_tensor.expand %m : tensor<1x1xf32> -> tensor<1x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<1x8xf32>
  %v = pg_tensor.reduce sum %d {axes = array<i64: 1>} : tensor<1x8xf32> -> tensor<1x1xf32>
  pg_sched.store %v, %out : tensor<1x1xf32>, !pg.buffer<1xf32>
}

// -----
// A gather reads its index tensor's element at the output position, casts it to an index and
// loads the table there, masked to 0 <= index < 100 (an out-of-range index reads nothing and
// gives 0). The expanded ids are read at [i0].
// CHECK-LABEL: pg_loop.kernel @embedding(
// CHECK:           %[[ZERO:.*]] = pg_loop.const 0
// CHECK-NEXT:      %[[ID:.*]] = pg_loop.load %ids[%i0] : !pg.buffer<6xi32> -> i32
// CHECK-NEXT:      %[[AT:.*]] = pg_uop.cast %[[ID]] : i32 to index
// CHECK-NEXT:      %[[GE:.*]] = pg_loop.cmp ge %[[AT]], %[[ZERO]]
// CHECK-NEXT:      %[[N:.*]] = pg_loop.const 100
// CHECK-NEXT:      %[[LT:.*]] = pg_loop.cmp lt %[[AT]], %[[N]]
// CHECK-NEXT:      %[[IN:.*]] = pg_loop.and %[[GE]], %[[LT]]
// CHECK-NEXT:      %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:      %[[ROW:.*]] = pg_loop.index mul %[[AT]], %[[C8]]
// CHECK-NEXT:      %[[OFF:.*]] = pg_loop.index add %[[ROW]], %i1
// CHECK-NEXT:      %[[V:.*]] = pg_loop.load %w[%[[OFF]]] if %[[IN]] else 0.0 : !pg.buffer<800xf32> -> f32
// CHECK:           pg_loop.store %[[V]], %out[
pg_sched.kernel @embedding(%w: !pg.buffer<800xf32>, %ids: !pg.buffer<6xi32>, %out: !pg.buffer<48xf32>) {
  %t = pg_sched.load %w : !pg.buffer<800xf32> -> tensor<100x8xf32>
  %i = pg_sched.load %ids : !pg.buffer<6xi32> -> tensor<6x1xi32>
  %e = pg_tensor.expand %i : tensor<6x1xi32> -> tensor<6x8xi32>
  %g = pg_tensor.gather %t[%e] {axis = 0 : i64} : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf32>
  pg_sched.store %g, %out : tensor<6x8xf32>, !pg.buffer<48xf32>
}

// -----
// A computed table (exp of a load) is evaluated at the gathered position under the mask, and
// the element is selected to 0 where the index is out of range (exp(0) would be 1).
// CHECK-LABEL: pg_loop.kernel @gather_computed(
// CHECK:           %[[IN:.*]] = pg_loop.and
// CHECK:           %[[X:.*]] = pg_loop.load %x[%{{.*}}] if %[[IN]] else 0.0 : !pg.buffer<12xf32> -> f32
// CHECK-NEXT:      %[[E:.*]] = pg_uop.unary exp %[[X]] : f32
// CHECK-NEXT:      %[[Z:.*]] = pg_uop.const 0.0 : f32
// CHECK-NEXT:      %[[R:.*]] = pg_uop.where %[[IN]], %[[E]], %[[Z]] : f32
// CHECK-NEXT:      pg_loop.store %[[R]], %out[
pg_sched.kernel @gather_computed(%x: !pg.buffer<12xf32>, %ids: !pg.buffer<6xi32>, %out: !pg.buffer<6xf32>) {
  %t = pg_sched.load %x : !pg.buffer<12xf32> -> tensor<3x4xf32>
  %e = pg_tensor.unary exp %t : tensor<3x4xf32>
  %i = pg_sched.load %ids : !pg.buffer<6xi32> -> tensor<3x2xi32>
  %g = pg_tensor.gather %e[%i] {axis = 1 : i64} : tensor<3x4xf32>, tensor<3x2xi32> -> tensor<3x2xf32>
  pg_sched.store %g, %out : tensor<3x2xf32>, !pg.buffer<6xf32>
}

// -----
// An in-place scatter_add (its base a load of its own output): one global range per column,
// in it one sequential loop over the ids that reads the element the id names (clamped into
// the buffer), adds the src element and writes it back (unchanged when the id is out of
// range). A scatter_add whose base is computed first writes the base along the axis.
// CHECK-LABEL: pg_loop.kernel @scatter_in_place(
// CHECK-NEXT:    pg_loop.range %i1 = 0 to 8 global {
// CHECK-NEXT:      pg_loop.range %k0 = 0 to 6 loop {
// CHECK:             %[[ID:.*]] = pg_loop.load %ids[%k0] : !pg.buffer<6xi32> -> i32
// CHECK-NEXT:        %[[AT:.*]] = pg_uop.cast %[[ID]] : i32 to index
// CHECK:             %[[IN:.*]] = pg_loop.and
// CHECK-NEXT:        %[[LO:.*]] = pg_loop.index max %[[AT]], %{{.*}}
// CHECK-NEXT:        %[[C9:.*]] = pg_loop.const 9
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index min %[[LO]], %[[C9]]
// CHECK:             %[[OFF:.*]] = pg_loop.index add %{{.*}}, %i1
// CHECK-NEXT:        %[[OLD:.*]] = pg_loop.load %out[%[[OFF]]] : !pg.buffer<80xf32> -> f32
// CHECK:             %[[SRC:.*]] = pg_loop.load %g[%{{.*}}] : !pg.buffer<48xf32> -> f32
// CHECK-NEXT:        %[[SUM:.*]] = pg_uop.binary add %[[OLD]], %[[SRC]] : f32
// CHECK-NEXT:        %[[NEW:.*]] = pg_uop.where %[[IN]], %[[SUM]], %[[OLD]] : f32
// CHECK-NEXT:        pg_loop.store %[[NEW]], %out[%[[OFF]]] : f32, !pg.buffer<80xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: pg_loop.kernel @scatter_with_base(
// CHECK-NEXT:    pg_loop.range %i1 = 0 to 8 global {
// CHECK-NEXT:      pg_loop.range %i0 = 0 to 10 loop {
// CHECK:             pg_loop.store %{{.*}}, %out[
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.range %k0 = 0 to 6 loop {
pg_sched.kernel @scatter_in_place(%ids: !pg.buffer<6xi32>, %g: !pg.buffer<48xf32>, %out: !pg.buffer<80xf32>) {
  %i = pg_sched.load %ids : !pg.buffer<6xi32> -> tensor<6x1xi32>
  %s = pg_sched.load %g : !pg.buffer<48xf32> -> tensor<6x8xf32>
  %e = pg_tensor.expand %i : tensor<6x1xi32> -> tensor<6x8xi32>
  %own = pg_sched.load %out : !pg.buffer<80xf32> -> tensor<10x8xf32>
  %r = pg_tensor.scatter_add %own[%e], %s {axis = 0 : i64} : tensor<10x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
  pg_sched.store %r, %out : tensor<10x8xf32>, !pg.buffer<80xf32>
}
pg_sched.kernel @scatter_with_base(%ids: !pg.buffer<6xi32>, %g: !pg.buffer<48xf32>, %out: !pg.buffer<80xf32>) {
  %i = pg_sched.load %ids : !pg.buffer<6xi32> -> tensor<6x1xi32>
  %s = pg_sched.load %g : !pg.buffer<48xf32> -> tensor<6x8xf32>
  %e = pg_tensor.expand %i : tensor<6x1xi32> -> tensor<6x8xi32>
  %z = pg_tensor.const 1.0 : tensor<10x8xf32>
  %r = pg_tensor.scatter_add %z[%e], %s {axis = 0 : i64} : tensor<10x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
  pg_sched.store %r, %out : tensor<10x8xf32>, !pg.buffer<80xf32>
}

// -----

// A reduce over an empty axis is its identity (0 for a sum, 1 for a product): nothing is
// read, no reduce loop is made.
// CHECK-LABEL: pg_loop.kernel @k0(%out: !pg.buffer<4xf32>) {
// CHECK-NEXT:    pg_loop.range %i0 = 0 to 4 global {
// CHECK-NEXT:      %[[ONE:.*]] = pg_uop.const 1.0 : f32
// CHECK-NEXT:      pg_loop.store %[[ONE]], %out[%i0] : f32, !pg.buffer<4xf32>
builtin.module {
  pg_sched.kernel @k0(%out: !pg.buffer<4xf32>) {
    %c = pg_tensor.const 3.0 : tensor<4x0xf32>
    %p = pg_tensor.reduce prod %c {axes = array<i64: 1>} : tensor<4x0xf32> -> tensor<4x1xf32>
    pg_sched.store %p, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
  }
}
