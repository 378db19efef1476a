// convert-tensor-to-sched: which kernels a pg_tensor graph becomes. An elementwise chain is one
// kernel; a reduce fuses with the elementwise ops and views feeding it; an elementwise op after
// a reduce reads the reduced buffer in a second kernel; every result gets its own buffer, read
// by later kernels; a returned input is returned as its own buffer (no copy kernel). Kernels
// take the buffers they read (first use first) then the one they write.
// RUN: opt-tool %s --split-input-file -p convert-tensor-to-sched | filecheck %s

// An elementwise chain with a constant: one kernel, the constant recreated inside it.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%a: !pg.buffer<32xf32>, %b: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
// CHECK-NEXT:      %[[A:.*]] = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %[[B:.*]] = pg_sched.load %b : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %x = pg_tensor.binary mul %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT:      %y = pg_tensor.unary exp %x : tensor<4x8xf32>
// CHECK-NEXT:      %c = pg_tensor.const 2.0 : tensor<4x8xf32>
// CHECK-NEXT:      %z = pg_tensor.binary add %y, %c : tensor<4x8xf32>
// CHECK-NEXT:      pg_sched.store %z, %out : tensor<4x8xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%a: !pg.buffer<32xf32>, %b: !pg.buffer<32xf32>) -> !pg.buffer<32xf32> {
// CHECK-NEXT:      %z = pg_sched.alloc : !pg.buffer<32xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%a, %b, %z) : !pg.buffer<32xf32>, !pg.buffer<32xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:      func.return %z : !pg.buffer<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %x = pg_tensor.binary mul %a, %b : tensor<4x8xf32>
  %y = pg_tensor.unary exp %x : tensor<4x8xf32>
  %c = pg_tensor.const 2.0 : tensor<4x8xf32>
  %z = pg_tensor.binary add %y, %c : tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}

// -----
// A reduce and the broadcast and elementwise ops feeding it: one kernel. %b is read first.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%b: !pg.buffer<8xf32>, %a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
// CHECK-NEXT:      %[[B:.*]] = pg_sched.load %b : !pg.buffer<8xf32> -> tensor<8xf32>
// CHECK-NEXT:      %[[A:.*]] = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %b1 = pg_tensor.reshape %[[B]] : tensor<8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:      %be = pg_tensor.expand %b1 : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %m = pg_tensor.binary mul %[[A]], %be : tensor<4x8xf32>
// CHECK-NEXT:      %e = pg_tensor.unary exp %m : tensor<4x8xf32>
// CHECK-NEXT:      %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%a: !pg.buffer<32xf32>, %b: !pg.buffer<8xf32>) -> !pg.buffer<4xf32> {
// CHECK-NEXT:      %s = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%b, %a, %s) : !pg.buffer<8xf32>, !pg.buffer<32xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:      func.return %s : !pg.buffer<4xf32>
// CHECK-NEXT:    }
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %b1 = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %b1 : tensor<1x8xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %e = pg_tensor.unary exp %m : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}

// -----
// Elementwise ops after a reduce over the last axis, at the reduce's input shape: the
// reduce is fused row-wise into the consumer's kernel (one kernel, no intermediate buffer).
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%x: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
// CHECK-NEXT:      %[[X:.*]] = pg_sched.load %x : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %m = pg_tensor.reduce max %[[X]] {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %d = pg_tensor.binary sub %[[X]], %me : tensor<4x8xf32>
// CHECK-NEXT:      %e = pg_tensor.unary exp %d : tensor<4x8xf32>
// CHECK-NEXT:      pg_sched.store %e, %out : tensor<4x8xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%x: !pg.buffer<32xf32>) -> !pg.buffer<32xf32> {
// CHECK-NEXT:      %e = pg_sched.alloc : !pg.buffer<32xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%x, %e) : !pg.buffer<32xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:      func.return %e : !pg.buffer<32xf32>
// CHECK-NEXT:    }
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = pg_tensor.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<4x8xf32>
  %e = pg_tensor.unary exp %d : tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}

// -----
// The same over the leading axis: the output's column loop would enclose the reduction, so
// the reduce is materialised and a second kernel reads it.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%x: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
// CHECK-NEXT:      %[[X:.*]] = pg_sched.load %x : !pg.buffer<32xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %m = pg_tensor.reduce max %[[X]] {axes = array<i64: 0>} : tensor<8x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:      pg_sched.store %m, %out : tensor<1x4xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pg_sched.kernel @k1(%m: !pg.buffer<4xf32>, %x: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
// CHECK-NEXT:      %[[M:.*]] = pg_sched.load %m : !pg.buffer<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:      %[[X1:.*]] = pg_sched.load %x : !pg.buffer<32xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %me = pg_tensor.expand %[[M]] : tensor<1x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:      %d = pg_tensor.binary sub %[[X1]], %me : tensor<8x4xf32>
// CHECK-NEXT:      pg_sched.store %d, %out : tensor<8x4xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%x: !pg.buffer<32xf32>) -> !pg.buffer<32xf32> {
// CHECK-NEXT:      %m = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%x, %m) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:      %d = pg_sched.alloc : !pg.buffer<32xf32>
// CHECK-NEXT:      pg_sched.launch @k1(%m, %x, %d) : !pg.buffer<4xf32>, !pg.buffer<32xf32>, !pg.buffer<32xf32>
// CHECK-NEXT:      func.return %d : !pg.buffer<32xf32>
// CHECK-NEXT:    }
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %m = pg_tensor.reduce max %x {axes = array<i64: 0>} : tensor<8x4xf32> -> tensor<1x4xf32>
  %me = pg_tensor.expand %m : tensor<1x4xf32> -> tensor<8x4xf32>
  %d = pg_tensor.binary sub %x, %me : tensor<8x4xf32>
  func.return %d : tensor<8x4xf32>
}

// -----
// A reduce followed only by a reshape (a matmul's epilogue): the reshape stays in the
// reduce's kernel, one kernel in all.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%x: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
// CHECK-NEXT:      %[[X:.*]] = pg_sched.load %x : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %s = pg_tensor.reduce sum %[[X]] {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %r = pg_tensor.reshape %s : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:      pg_sched.store %r, %out : tensor<4xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     pg_sched.kernel
// CHECK:         func.func @main
func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = pg_tensor.reshape %s : tensor<4x1xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----
// Two results, one computed from the other: each is a buffer, the second kernel reads the
// first result's buffer instead of recomputing it.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) {
// CHECK:           %s = pg_tensor.binary add
// CHECK-NEXT:      pg_sched.store %s, %out
// CHECK-NEXT:    }
// CHECK-NEXT:    pg_sched.kernel @k1(%s: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) {
// CHECK-NEXT:      %[[S:.*]] = pg_sched.load %s : !pg.buffer<8xf32> -> tensor<8xf32>
// CHECK-NEXT:      %n = pg_tensor.unary neg %[[S]] : tensor<8xf32>
// CHECK-NEXT:      pg_sched.store %n, %out : tensor<8xf32>, !pg.buffer<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xf32>) -> (!pg.buffer<8xf32>, !pg.buffer<8xf32>) {
// CHECK-NEXT:      %s = pg_sched.alloc : !pg.buffer<8xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%a, %b, %s)
// CHECK-NEXT:      %n = pg_sched.alloc : !pg.buffer<8xf32>
// CHECK-NEXT:      pg_sched.launch @k1(%s, %n)
// CHECK-NEXT:      func.return %s, %n : !pg.buffer<8xf32>, !pg.buffer<8xf32>
// CHECK-NEXT:    }
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = pg_tensor.binary add %a, %b : tensor<8xf32>
  %n = pg_tensor.unary neg %s : tensor<8xf32>
  func.return %s, %n : tensor<8xf32>, tensor<8xf32>
}

// -----
// Returning an input: it is returned as the argument's buffer, with no kernel; a returned
// constant gets a kernel that fills its buffer; dead ops get nothing.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%out: !pg.buffer<8xf32>) {
// CHECK-NEXT:      %c = pg_tensor.const 3.0 : tensor<8xf32>
// CHECK-NEXT:      pg_sched.store %c, %out : tensor<8xf32>, !pg.buffer<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xf32>) -> (!pg.buffer<8xf32>, !pg.buffer<8xf32>) {
// CHECK-NEXT:      %c = pg_sched.alloc : !pg.buffer<8xf32>
// CHECK-NEXT:      pg_sched.launch @k0(%c) : !pg.buffer<8xf32>
// CHECK-NEXT:      func.return %a, %c : !pg.buffer<8xf32>, !pg.buffer<8xf32>
// CHECK-NEXT:    }
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %dead = pg_tensor.binary add %a, %b : tensor<8xf32>
  %c = pg_tensor.const 3.0 : tensor<8xf32>
  func.return %a, %c : tensor<8xf32>, tensor<8xf32>
}

// -----

// A value re-read by three taps of a window (each at its own offset) would be evaluated three
// times per element it produces: more than MAX_REUSE, so it gets a kernel of its own.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%x: !pg.buffer<10xf32>, %out: !pg.buffer<10xf32>) {
// CHECK:           %r = pg_tensor.binary max
// CHECK-NEXT:      pg_sched.store %r, %out
// CHECK:         pg_sched.kernel @k1(%r: !pg.buffer<10xf32>, %out: !pg.buffer<8xf32>) {
// CHECK-NEXT:      %r_1 = pg_sched.load %r
// CHECK-COUNT-3:   pg_tensor.slice %r_1
// CHECK-NOT:       pg_tensor.binary max
// CHECK:           pg_sched.store %u, %out
func.func @main(%x: tensor<10xf32>) -> tensor<8xf32> {
  %z = pg_tensor.const 0.0 : tensor<10xf32>
  %r = pg_tensor.binary max %x, %z : tensor<10xf32>
  %t0 = pg_tensor.slice %r {start = array<i64: 0>, step = array<i64: 1>} : tensor<10xf32> -> tensor<8xf32>
  %t1 = pg_tensor.slice %r {start = array<i64: 1>, step = array<i64: 1>} : tensor<10xf32> -> tensor<8xf32>
  %t2 = pg_tensor.slice %r {start = array<i64: 2>, step = array<i64: 1>} : tensor<10xf32> -> tensor<8xf32>
  %s = pg_tensor.binary add %t0, %t1 : tensor<8xf32>
  %u = pg_tensor.binary add %s, %t2 : tensor<8xf32>
  func.return %u : tensor<8xf32>
}

// -----
// A pool whose windows tile its input: four slices that read disjoint elements of %e5 count
// as one user, so %e5 (cost 5) is computed inside the pooling kernel, once per element.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%a: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:           %e5 = pg_tensor.unary exp %e4 : tensor<16xf32>
// CHECK:           pg_sched.store %m3, %out : tensor<4xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main
func.func @main(%a: tensor<16xf32>) -> tensor<4xf32> {
  %e1 = pg_tensor.unary exp %a : tensor<16xf32>
  %e2 = pg_tensor.unary exp %e1 : tensor<16xf32>
  %e3 = pg_tensor.unary exp %e2 : tensor<16xf32>
  %e4 = pg_tensor.unary exp %e3 : tensor<16xf32>
  %e5 = pg_tensor.unary exp %e4 : tensor<16xf32>
  %s0 = pg_tensor.slice %e5 {start = array<i64: 0>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s1 = pg_tensor.slice %e5 {start = array<i64: 1>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s2 = pg_tensor.slice %e5 {start = array<i64: 2>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s3 = pg_tensor.slice %e5 {start = array<i64: 3>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %m1 = pg_tensor.binary max %s0, %s1 : tensor<4xf32>
  %m2 = pg_tensor.binary max %m1, %s2 : tensor<4xf32>
  %m3 = pg_tensor.binary max %m2, %s3 : tensor<4xf32>
  func.return %m3 : tensor<4xf32>
}

// -----
// The same slices overlapping (windows of stride 1): four users recomputing %e5, which gets
// its own kernel.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
// CHECK:           pg_sched.store %e5, %out : tensor<16xf32>, !pg.buffer<16xf32>
// CHECK:         pg_sched.kernel @k1(%e5: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:           pg_sched.store %m3, %out : tensor<4xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main
func.func @main(%a: tensor<16xf32>) -> tensor<4xf32> {
  %e1 = pg_tensor.unary exp %a : tensor<16xf32>
  %e2 = pg_tensor.unary exp %e1 : tensor<16xf32>
  %e3 = pg_tensor.unary exp %e2 : tensor<16xf32>
  %e4 = pg_tensor.unary exp %e3 : tensor<16xf32>
  %e5 = pg_tensor.unary exp %e4 : tensor<16xf32>
  %s0 = pg_tensor.slice %e5 {start = array<i64: 0>, step = array<i64: 1>} : tensor<16xf32> -> tensor<4xf32>
  %s1 = pg_tensor.slice %e5 {start = array<i64: 1>, step = array<i64: 1>} : tensor<16xf32> -> tensor<4xf32>
  %s2 = pg_tensor.slice %e5 {start = array<i64: 2>, step = array<i64: 1>} : tensor<16xf32> -> tensor<4xf32>
  %s3 = pg_tensor.slice %e5 {start = array<i64: 3>, step = array<i64: 1>} : tensor<16xf32> -> tensor<4xf32>
  %m1 = pg_tensor.binary max %s0, %s1 : tensor<4xf32>
  %m2 = pg_tensor.binary max %m1, %s2 : tensor<4xf32>
  %m3 = pg_tensor.binary max %m2, %s3 : tensor<4xf32>
  func.return %m3 : tensor<4xf32>
}

// -----
// Disjoint slices, one of them read by three ops (a pool and its gradient): the value they
// tile gets one buffer, not the slice one per slice.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    pg_sched.kernel @k0(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
// CHECK:           pg_sched.store %e5, %out : tensor<16xf32>, !pg.buffer<16xf32>
// CHECK:         pg_sched.kernel @k1(%e5: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:           pg_sched.store %m3, %out
// CHECK:         pg_sched.kernel @k2(%e5: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:           pg_sched.store %u, %out
// CHECK:         pg_sched.kernel @k3(%e5: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:           pg_sched.store %v, %out
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main
func.func @main(%a: tensor<16xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e1 = pg_tensor.unary exp %a : tensor<16xf32>
  %e2 = pg_tensor.unary exp %e1 : tensor<16xf32>
  %e3 = pg_tensor.unary exp %e2 : tensor<16xf32>
  %e4 = pg_tensor.unary exp %e3 : tensor<16xf32>
  %e5 = pg_tensor.unary exp %e4 : tensor<16xf32>
  %s0 = pg_tensor.slice %e5 {start = array<i64: 0>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s1 = pg_tensor.slice %e5 {start = array<i64: 1>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s2 = pg_tensor.slice %e5 {start = array<i64: 2>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %s3 = pg_tensor.slice %e5 {start = array<i64: 3>, step = array<i64: 4>} : tensor<16xf32> -> tensor<4xf32>
  %m1 = pg_tensor.binary max %s0, %s1 : tensor<4xf32>
  %m2 = pg_tensor.binary max %m1, %s2 : tensor<4xf32>
  %m3 = pg_tensor.binary max %m2, %s3 : tensor<4xf32>
  %u = pg_tensor.unary exp %s0 : tensor<4xf32>
  %v = pg_tensor.unary log %s0 : tensor<4xf32>
  func.return %m3, %u, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----
// A scatter_add is two kernels on one buffer: the first stores its base (here a constant),
// the second loads that buffer, its own output, as the base and adds into it; the src's
// producer (the mul) fuses into the second, the base's uses elsewhere would recompute it.
// CHECK-LABEL: pg_sched.kernel @k0(%out: !pg.buffer<80xf32>) {
// CHECK-NEXT:    %z = pg_tensor.const 0.0 : tensor<10x8xf32>
// CHECK-NEXT:    pg_sched.store %z, %out : tensor<10x8xf32>, !pg.buffer<80xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_sched.kernel @k1(%ids: !pg.buffer<6xi32>, %g: !pg.buffer<48xf32>, %out: !pg.buffer<80xf32>) {
// CHECK:         %g2 = pg_tensor.binary mul
// CHECK-NEXT:    %[[OWN:.*]] = pg_sched.load %out : !pg.buffer<80xf32> -> tensor<10x8xf32>
// CHECK-NEXT:    %r = pg_tensor.scatter_add %[[OWN]][%e], %g2 {axis = 0 : i64}
// CHECK-NEXT:    pg_sched.store %r, %out : tensor<10x8xf32>, !pg.buffer<80xf32>
// CHECK:       func.func @main(%g: !pg.buffer<48xf32>, %ids: !pg.buffer<6xi32>) -> !pg.buffer<80xf32> {
// CHECK-NEXT:    %r = pg_sched.alloc : !pg.buffer<80xf32>
// CHECK-NEXT:    pg_sched.launch @k0(%r) : !pg.buffer<80xf32>
// CHECK-NEXT:    pg_sched.launch @k1(%ids, %g, %r) : !pg.buffer<6xi32>, !pg.buffer<48xf32>, !pg.buffer<80xf32>
// CHECK-NEXT:    func.return %r : !pg.buffer<80xf32>
func.func @main(%g: tensor<6x8xf32>, %ids: tensor<6x1xi32>) -> tensor<10x8xf32> {
  %z = pg_tensor.const 0.0 : tensor<10x8xf32>
  %e = pg_tensor.expand %ids : tensor<6x1xi32> -> tensor<6x8xi32>
  %two = pg_tensor.const 2.0 : tensor<6x8xf32>
  %g2 = pg_tensor.binary mul %g, %two : tensor<6x8xf32>
  %r = pg_tensor.scatter_add %z[%e], %g2 {axis = 0 : i64} : tensor<10x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
  func.return %r : tensor<10x8xf32>
}

// -----

// A contiguous op is always a kernel of its own (a buffer is what it asks for); its reader
// loads that buffer. A copy of views of arguments only (a layout copy) has an invariant
// launch: the runtime may keep its output while the argument is unchanged. A contiguous
// of a computed value (the exp, fused into it) is not invariant.
// CHECK-LABEL: pg_sched.kernel @k0(%w: !pg.buffer<128xf32>, %out: !pg.buffer<128xf32>) {
// CHECK-NEXT:    %[[W:.*]] = pg_sched.load %w : !pg.buffer<128xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %t = pg_tensor.permute %[[W]] {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %c = pg_tensor.contiguous %t : tensor<16x8xf32>
// CHECK-NEXT:    pg_sched.store %c, %out : tensor<16x8xf32>, !pg.buffer<128xf32>
// CHECK:       pg_sched.kernel @k1(%c: !pg.buffer<128xf32>, %out: !pg.buffer<128xf32>) {
// CHECK-NEXT:    %[[C:.*]] = pg_sched.load %c : !pg.buffer<128xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %e = pg_tensor.unary exp %[[C]] : tensor<16x8xf32>
// CHECK-NEXT:    %d = pg_tensor.contiguous %e : tensor<16x8xf32>
// CHECK:       func.func @main(%w: !pg.buffer<128xf32>) -> !pg.buffer<128xf32> {
// CHECK-NEXT:    %c = pg_sched.alloc : !pg.buffer<128xf32>
// CHECK-NEXT:    pg_sched.launch @k0(%w, %c) {invariant} : !pg.buffer<128xf32>, !pg.buffer<128xf32>
// CHECK-NEXT:    %d = pg_sched.alloc : !pg.buffer<128xf32>
// CHECK-NEXT:    pg_sched.launch @k1(%c, %d) : !pg.buffer<128xf32>, !pg.buffer<128xf32>
func.func @main(%w: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %t = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %c = pg_tensor.contiguous %t : tensor<16x8xf32>
  %e = pg_tensor.unary exp %c : tensor<16x8xf32>
  %d = pg_tensor.contiguous %e : tensor<16x8xf32>
  func.return %d : tensor<16x8xf32>
}

// -----
// A realize names each value after its lazy node (%pg.n<i>): the alloc of a stored value keeps
// that name (the runtime can hand the buffer back to the node), values inside kernels drop it
// (a kernel's text does not depend on where its ops sit in the graph); other names stay.
// CHECK-LABEL: pg_sched.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
// CHECK-NOT:     pg.n
// CHECK:         pg_sched.store
// CHECK-LABEL: pg_sched.kernel @k1(
// CHECK-NOT:     pg.n
// CHECK:         %d = pg_tensor.binary sub
// CHECK-NOT:     pg.n
// CHECK:       func.func @main(%a: !pg.buffer<32xf32>) -> (!pg.buffer<4xf32>, !pg.buffer<32xf32>) {
// CHECK-NEXT:    %pg.n1 = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:    pg_sched.launch @k0(%a, %pg.n1)
// CHECK-NEXT:    %pg.n3 = pg_sched.alloc : !pg.buffer<32xf32>
// CHECK-NEXT:    pg_sched.launch @k1(
// CHECK-NEXT:    func.return %pg.n1, %pg.n3 : !pg.buffer<4xf32>, !pg.buffer<32xf32>
func.func @main(%a: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %pg.n1 = pg_tensor.reduce sum %a {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %pg.n2 = pg_tensor.expand %pg.n1 : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = pg_tensor.binary sub %a, %pg.n2 : tensor<4x8xf32>
  %pg.n3 = pg_tensor.unary exp %d : tensor<4x8xf32>
  func.return %pg.n1, %pg.n3 : tensor<4x1xf32>, tensor<4x8xf32>
}
