// RUN: opt-tool %s -p convert-uop-to-llvm | filecheck %s

// A reduction: an entry-block alloca for the accumulator, ranges as rotated loops (the
// induction variable is the body block's argument; the latch increments and branches back),
// addresses through getelementptr; every constant once, at the top of the entry block. Every kernel takes two trailing i64 (start, end); a kernel
// that is one top-level global range (here @k0) runs that range over [start, end) (tested
// before the first iteration, as a chunk may be empty) and records its trip count and work
// as `pg.outer` / `pg.work` (picograd/lowering/outer_range.py).

// CHECK-LABEL: llvm.func @k0(%a: !llvm.ptr {llvm.noalias}, %out: !llvm.ptr {llvm.noalias}, %start: i64, %end: i64) attributes {pg.outer = 4 : i64, pg.work = 236 : i64} {
// CHECK-NEXT:    %[[STEP:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[INIT:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[J0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %c8 = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %acc = llvm.alloca %[[ONE]] x f32 {alignment = 4 : i64} : (i32) -> !llvm.ptr
// CHECK-NEXT:    %[[ANY:.*]] = llvm.icmp "slt" %start, %end : i64
// CHECK-NEXT:    llvm.cond_br %[[ANY]], ^[[IBODY:.*]](%start : i64), ^[[IEXIT:.*]]
// CHECK-NEXT:  ^[[IBODY]](%i: i64):
// CHECK-NEXT:    llvm.store %[[INIT]], %acc : f32, !llvm.ptr
// CHECK-NEXT:    llvm.br ^[[JBODY:.*]](%[[J0]] : i64)
// CHECK-NEXT:  ^[[JBODY]](%j: i64):
// CHECK-NEXT:    %o = llvm.mul %i, %c8 : i64
// CHECK-NEXT:    %idx = llvm.add %o, %j : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %a[%idx] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %v = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT:    %old = llvm.load %acc : !llvm.ptr -> f32
// CHECK-NEXT:    %new = llvm.fadd %old, %v : f32
// CHECK-NEXT:    llvm.store %new, %acc : f32, !llvm.ptr
// CHECK-NEXT:    %[[JNEXT:.*]] = llvm.add %j, %[[STEP]] overflow<nsw,nuw> : i64
// CHECK-NEXT:    %[[JMORE:.*]] = llvm.icmp "slt" %[[JNEXT]], %c8 : i64
// CHECK-NEXT:    llvm.cond_br %[[JMORE]], ^[[JBODY]](%[[JNEXT]] : i64), ^[[JEXIT:.*]]
// CHECK-NEXT:  ^[[JEXIT]]:
// CHECK-NEXT:    %r = llvm.load %acc : !llvm.ptr -> f32
// CHECK-NEXT:    %[[Q:.*]] = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %r, %[[Q]] : f32, !llvm.ptr
// CHECK-NEXT:    %[[INEXT:.*]] = llvm.add %i, %[[STEP]] overflow<nsw,nuw> : i64
// CHECK-NEXT:    %[[IMORE:.*]] = llvm.icmp "slt" %[[INEXT]], %end : i64
// CHECK-NEXT:    llvm.cond_br %[[IMORE]], ^[[IBODY]](%[[INEXT]] : i64), ^[[IEXIT]]
// CHECK-NEXT:  ^[[IEXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
pg_uop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 8 reduce
  %c8 = pg_uop.const 8 : index
  %o = pg_uop.binary mul %i, %c8 : index
  %idx = pg_uop.binary add %o, %j : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// A masked load (select the index, then the value), NaN-propagating max, exp (inline
// arithmetic, see convert-uop-to-llvm-exp.mlir), a float->int cast through the saturating
// intrinsic, C division, and a bool stored as a byte.

// CHECK-LABEL: llvm.func @k1(%x: !llvm.ptr {llvm.noalias}, %b: !llvm.ptr {llvm.noalias}, %q: !llvm.ptr {llvm.noalias}, %start_1: i64, %end_1: i64) attributes {pg.outer = 6 : i64, pg.work = 78 : i64} {
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[OTHER:.*]] = llvm.mlir.constant(1.500000e+00 : f32) : f32
// CHECK:         %m = llvm.icmp "slt" %{{.*}}, %c4 : i64
// CHECK-NEXT:    %[[SAFE:.*]] = llvm.select %m, %{{.*}}, %[[ZERO]] : i1, i64
// CHECK-NEXT:    %[[XP:.*]] = llvm.getelementptr inbounds %x[%[[SAFE]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[RAW:.*]] = llvm.load %[[XP]] : !llvm.ptr -> f32
// CHECK-NEXT:    %[[V:.*]] = llvm.select %m, %[[RAW]], %[[OTHER]] : i1, f32
// CHECK-NEXT:    %[[GT:.*]] = llvm.fcmp "ogt" %[[V]], %[[V]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = llvm.fcmp "uno" %[[V]], %[[V]] : f32
// CHECK-NEXT:    %[[PICK:.*]] = llvm.or %[[GT]], %[[NAN]] : i1
// CHECK-NEXT:    %hi = llvm.select %[[PICK]], %[[V]], %[[V]] : i1, f32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.maximum.f32"(%hi, %{{.*}}) : (f32, f32) -> f32
// CHECK:         %e = llvm.fmul %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %n = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%e) : (f32) -> i32
// CHECK-NEXT:    %d = llvm.sdiv %n, %two : i32
// CHECK-NEXT:    %s = llvm.srem %d, %two : i32
// CHECK:         %pos = llvm.fcmp "une" %[[V]], %z : f32
// CHECK-NEXT:    %[[BYTE:.*]] = llvm.zext %pos : i1 to i8
// CHECK-NEXT:    %[[BP:.*]] = llvm.getelementptr inbounds %b[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.store %[[BYTE]], %[[BP]] : i8, !llvm.ptr
pg_uop.kernel @k1(%x: !pg.buffer<6xf32>, %b: !pg.buffer<6xi1>, %q: !pg.buffer<6xi32>) {
  %i = pg_uop.range 0 to 6 global
  %c4 = pg_uop.const 4 : index
  %m = pg_uop.cmp lt %i, %c4 : index
  %v = pg_uop.load %x[%i] if %m else 1.5 : !pg.buffer<6xf32> -> f32
  %hi = pg_uop.binary max %v, %v : f32
  %e = pg_uop.unary exp %hi : f32
  %n = pg_uop.cast %e : f32 to i32
  %two = pg_uop.const 2 : i32
  %d = pg_uop.binary div %n, %two : i32
  %s = pg_uop.binary mod %d, %two : i32
  pg_uop.store %s, %q[%i] : i32, !pg.buffer<6xi32>
  %z = pg_uop.const 0.0 : f32
  %pos = pg_uop.cmp ne %v, %z : f32
  pg_uop.store %pos, %b[%i] : i1, !pg.buffer<6xi1>
  pg_uop.end %i
}

// A bool load is a byte compared with 0. @k2 is launched once with one buffer twice, so its
// pointers get no noalias.

// CHECK-LABEL: llvm.func @k2(%src: !llvm.ptr, %dst: !llvm.ptr, %start_2: i64, %end_2: i64) attributes {pg.outer = 6 : i64, pg.work = 18 : i64} {
// CHECK:         %[[B0:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK-NEXT:    %[[T:.*]] = llvm.mlir.constant(true) : i1
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK-NEXT:    %f = llvm.icmp "ne" %[[B]], %[[B0]] : i8
// CHECK-NEXT:    %nf = llvm.xor %f, %[[T]] : i1
// CHECK-NEXT:    %[[NB:.*]] = llvm.zext %nf : i1 to i8
pg_uop.kernel @k2(%src: !pg.buffer<6xi1>, %dst: !pg.buffer<6xi1>) {
  %i = pg_uop.range 0 to 6 global
  %f = pg_uop.load %src[%i] : !pg.buffer<6xi1> -> i1
  %nf = pg_uop.unary not %f : i1
  pg_uop.store %nf, %dst[%i] : i1, !pg.buffer<6xi1>
  pg_uop.end %i
}

// The schedule is left exactly as it was.

// A sum into a scalar (an accumulator outside the loop, a store after it) is never split: no
// attributes, and the loop keeps its constant bounds.
// CHECK-LABEL: llvm.func @sum(%a{{.*}}: !llvm.ptr, %out{{.*}}: !llvm.ptr, %start_3: i64, %end_3: i64) {
// CHECK-NEXT:    %[[S0:.*]] = llvm.mlir.constant(0) : i64
// CHECK:         %[[SN:.*]] = llvm.mlir.constant(8) : i64
// CHECK:         llvm.store %{{.*}}, %acc{{.*}} : f32, !llvm.ptr
// CHECK-NEXT:    llvm.br ^[[SBODY:.*]](%[[S0]] : i64)
// CHECK:         llvm.icmp "slt" %{{.*}}, %[[SN]] : i64
pg_uop.kernel @sum(%a: !pg.buffer<8xf32>, %out: !pg.buffer<1xf32>) {
  %c0 = pg_uop.const 0 : index
  %acc = pg_uop.acc 0.0 : f32
  %i = pg_uop.range 0 to 8 reduce
  %v = pg_uop.load %a[%i] : !pg.buffer<8xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %i
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%c0] : f32, !pg.buffer<1xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %t = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:    %{{.*}} = pg_sched.alloc : !pg.buffer<6xi1>
// CHECK-NEXT:    %{{.*}} = pg_sched.alloc : !pg.buffer<6xi32>
// CHECK-NEXT:    pg_sched.launch @k0(%{{.*}}, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:    pg_sched.launch @k1(%{{.*}}) : !pg.buffer<6xf32>, !pg.buffer<6xi1>, !pg.buffer<6xi32>
// CHECK-NEXT:    pg_sched.launch @k2(%[[BUF:.*]], %[[BUF]]) : !pg.buffer<6xi1>, !pg.buffer<6xi1>
// CHECK-NEXT:    func.return %t : !pg.buffer<4xf32>
// CHECK-NOT:   pg_uop.
func.func @main(%a: !pg.buffer<32xf32>, %x: !pg.buffer<6xf32>) -> !pg.buffer<4xf32> {
  %t = pg_sched.alloc : !pg.buffer<4xf32>
  %b = pg_sched.alloc : !pg.buffer<6xi1>
  %q = pg_sched.alloc : !pg.buffer<6xi32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
  pg_sched.launch @k1(%x, %b, %q) : !pg.buffer<6xf32>, !pg.buffer<6xi1>, !pg.buffer<6xi32>
  pg_sched.launch @k2(%b, %b) : !pg.buffer<6xi1>, !pg.buffer<6xi1>
  func.return %t : !pg.buffer<4xf32>
}
