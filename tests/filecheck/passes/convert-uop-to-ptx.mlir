// convert-uop-to-ptx: GPU-form pg_uop kernels become pg_ptx entries (checked in the IR) that
// print as PTX (-t ptx, prefix PTX; -t ptx-sm90, prefix SM90). Covers the launch dims from
// the specials, a guard (if -> predicated branch over the body), exp2 and NaN-propagating
// max, a sequential loop with an accumulator, shared memory and a barrier, trap-free integer
// division, bools as bytes, f16 computed in f32 and rounded, index div by a power of two as a
// shift, constants and parameter addresses hoisted to the top, and @main left as it is.
// RUN: opt-tool %s -p convert-uop-to-ptx | filecheck %s
// RUN: opt-tool %s -p convert-uop-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// RUN: opt-tool %s -p convert-uop-to-ptx -t ptx-sm90 | filecheck %s --check-prefix=SM90

// CHECK-LABEL: pg_ptx.entry @scale(%a: !pg.buffer<1000xf32>, %out: !pg.buffer<1000xf32>) grid [4, 1, 1] block [256, 1, 1] {
// CHECK-NEXT:    %a_param = pg_ptx.ld_param %a : !pg.buffer<1000xf32>
// CHECK-NEXT:    %a_ptr = pg_ptx.alu cvta.to.global.u64 %a_param : i64
// CHECK-NEXT:    %out_param = pg_ptx.ld_param %out : !pg.buffer<1000xf32>
// CHECK-NEXT:    %out_ptr = pg_ptx.alu cvta.to.global.u64 %out_param : i64
// CHECK-NEXT:    %g = pg_ptx.sreg ctaid.x
// CHECK-NEXT:    %l = pg_ptx.sreg tid.x
// CHECK-NEXT:    [[SCALE0:%[0-9]+]] = pg_ptx.const 256 : i32
// CHECK-NEXT:    [[SCALE1:%[0-9]+]] = pg_ptx.const 1000 : i32
// CHECK-NEXT:    [[SCALE2:%[0-9]+]] = pg_ptx.const 4 : i32
// CHECK-NEXT:    %base = pg_ptx.alu mul.lo.s32 %g, [[SCALE0]] : i32
// CHECK-NEXT:    %i = pg_ptx.alu add.s32 %base, %l : i32
// CHECK-NEXT:    %ok = pg_ptx.alu setp.lt.s32 %i, [[SCALE1]] : (i32, i32) -> i1
// CHECK-NEXT:    pg_ptx.bra L0_endif if not %ok
// CHECK-NEXT:    [[SCALE3:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %i, [[SCALE2]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SCALE4:%[0-9]+]] = pg_ptx.alu add.s64 %a_ptr, [[SCALE3]] : i64
// CHECK-NEXT:    %x = pg_ptx.ld global.f32 [[[SCALE4]]] : f32
// CHECK-NEXT:    %e = pg_ptx.alu ex2.approx.f32 %x : f32
// CHECK-NEXT:    [[SCALE5:%[0-9]+]] = pg_ptx.alu setp.gt.f32 %e, %x : (f32, f32) -> i1
// CHECK-NEXT:    [[SCALE6:%[0-9]+]] = pg_ptx.alu setp.nan.f32 %e, %e : (f32, f32) -> i1
// CHECK-NEXT:    [[SCALE7:%[0-9]+]] = pg_ptx.alu or.pred [[SCALE5]], [[SCALE6]] : i1
// CHECK-NEXT:    %m = pg_ptx.alu selp.f32 %e, %x, [[SCALE7]] : (f32, f32, i1) -> f32
// CHECK-NEXT:    [[SCALE8:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %i, [[SCALE2]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SCALE9:%[0-9]+]] = pg_ptx.alu add.s64 %out_ptr, [[SCALE8]] : i64
// CHECK-NEXT:    pg_ptx.st global.f32 [[[SCALE9]]], %m : f32
// CHECK-NEXT:    pg_ptx.label L0_endif
// CHECK-NEXT:  }
// CHECK-LABEL: pg_ptx.entry @sum(%a: !pg.buffer<32xf32>, %out: !pg.buffer<1xf32>) grid [1, 1, 1] block [8, 1, 1] {
// CHECK-NEXT:    %a_param = pg_ptx.ld_param %a : !pg.buffer<32xf32>
// CHECK-NEXT:    %a_ptr = pg_ptx.alu cvta.to.global.u64 %a_param : i64
// CHECK-NEXT:    %out_param = pg_ptx.ld_param %out : !pg.buffer<1xf32>
// CHECK-NEXT:    %out_ptr = pg_ptx.alu cvta.to.global.u64 %out_param : i64
// CHECK-NEXT:    %l = pg_ptx.sreg tid.x
// CHECK-NEXT:    %s = pg_ptx.shared sum_smem0 : !pg.buffer<8xf32>
// CHECK-NEXT:    [[SUM0:%[0-9]+]] = pg_ptx.const 0.0 : f32
// CHECK-NEXT:    [[SUM1:%[0-9]+]] = pg_ptx.const 0 : i32
// CHECK-NEXT:    [[SUM2:%[0-9]+]] = pg_ptx.const 8 : i32
// CHECK-NEXT:    [[SUM3:%[0-9]+]] = pg_ptx.const 4 : i32
// CHECK-NEXT:    [[SUM4:%[0-9]+]] = pg_ptx.const 1 : i32
// CHECK-NEXT:    %acc = pg_ptx.reg : f32
// CHECK-NEXT:    pg_ptx.write %acc, [[SUM0]] : f32
// CHECK-NEXT:    %j_counter = pg_ptx.reg : i32
// CHECK-NEXT:    pg_ptx.write %j_counter, [[SUM1]] : i32
// CHECK-NEXT:    pg_ptx.label L0_loop
// CHECK-NEXT:    %j = pg_ptx.read %j_counter : i32
// CHECK-NEXT:    %o = pg_ptx.alu mul.lo.s32 %j, [[SUM2]] : i32
// CHECK-NEXT:    %idx = pg_ptx.alu add.s32 %o, %l : i32
// CHECK-NEXT:    [[SUM5:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %idx, [[SUM3]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SUM6:%[0-9]+]] = pg_ptx.alu add.s64 %a_ptr, [[SUM5]] : i64
// CHECK-NEXT:    %v = pg_ptx.ld global.f32 [[[SUM6]]] : f32
// CHECK-NEXT:    %old = pg_ptx.read %acc : f32
// CHECK-NEXT:    %new = pg_ptx.alu add.rn.f32 %old, %v : f32
// CHECK-NEXT:    pg_ptx.write %acc, %new : f32
// CHECK-NEXT:    [[SUM7:%[0-9]+]] = pg_ptx.alu add.s32 %j, [[SUM4]] : i32
// CHECK-NEXT:    pg_ptx.write %j_counter, [[SUM7]] : i32
// CHECK-NEXT:    [[SUM8:%[0-9]+]] = pg_ptx.alu setp.lt.s32 [[SUM7]], [[SUM3]] : (i32, i32) -> i1
// CHECK-NEXT:    pg_ptx.bra L0_loop if [[SUM8]]
// CHECK-NEXT:    %r = pg_ptx.read %acc : f32
// CHECK-NEXT:    [[SUM9:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %l, [[SUM3]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SUM10:%[0-9]+]] = pg_ptx.alu add.s64 %s, [[SUM9]] : i64
// CHECK-NEXT:    pg_ptx.st shared.f32 [[[SUM10]]], %r : f32
// CHECK-NEXT:    pg_ptx.bar_sync
// CHECK-NEXT:    %first = pg_ptx.alu setp.eq.s32 %l, [[SUM1]] : (i32, i32) -> i1
// CHECK-NEXT:    pg_ptx.bra L1_endif if not %first
// CHECK-NEXT:    [[SUM11:%[0-9]+]] = pg_ptx.alu mul.wide.s32 [[SUM1]], [[SUM3]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SUM12:%[0-9]+]] = pg_ptx.alu add.s64 %s, [[SUM11]] : i64
// CHECK-NEXT:    %t = pg_ptx.ld shared.f32 [[[SUM12]]] : f32
// CHECK-NEXT:    [[SUM13:%[0-9]+]] = pg_ptx.alu mul.wide.s32 [[SUM1]], [[SUM3]] : (i32, i32) -> i64
// CHECK-NEXT:    [[SUM14:%[0-9]+]] = pg_ptx.alu add.s64 %out_ptr, [[SUM13]] : i64
// CHECK-NEXT:    pg_ptx.st global.f32 [[[SUM14]]], %t : f32
// CHECK-NEXT:    pg_ptx.label L1_endif
// CHECK-NEXT:  }
// CHECK-LABEL: pg_ptx.entry @ints(%a: !pg.buffer<8xi32>, %b: !pg.buffer<8xi1>, %h: !pg.buffer<8xf16>) grid [1, 1, 1] block [8, 1, 1] {
// CHECK-NEXT:    %a_param = pg_ptx.ld_param %a : !pg.buffer<8xi32>
// CHECK-NEXT:    %a_ptr = pg_ptx.alu cvta.to.global.u64 %a_param : i64
// CHECK-NEXT:    %b_param = pg_ptx.ld_param %b : !pg.buffer<8xi1>
// CHECK-NEXT:    %b_ptr = pg_ptx.alu cvta.to.global.u64 %b_param : i64
// CHECK-NEXT:    %h_param = pg_ptx.ld_param %h : !pg.buffer<8xf16>
// CHECK-NEXT:    %h_ptr = pg_ptx.alu cvta.to.global.u64 %h_param : i64
// CHECK-NEXT:    %l = pg_ptx.sreg tid.x
// CHECK-NEXT:    [[INTS0:%[0-9]+]] = pg_ptx.const 4 : i32
// CHECK-NEXT:    [[INTS1:%[0-9]+]] = pg_ptx.const 0 : i32
// CHECK-NEXT:    [[INTS2:%[0-9]+]] = pg_ptx.const 1 : i32
// CHECK-NEXT:    [[INTS3:%[0-9]+]] = pg_ptx.const -1 : i32
// CHECK-NEXT:    [[INTS4:%[0-9]+]] = pg_ptx.const 2 : i32
// CHECK-NEXT:    [[INTS5:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %l, [[INTS0]] : (i32, i32) -> i64
// CHECK-NEXT:    [[INTS6:%[0-9]+]] = pg_ptx.alu add.s64 %a_ptr, [[INTS5]] : i64
// CHECK-NEXT:    %x = pg_ptx.ld global.b32 [[[INTS6]]] : i32
// CHECK-NEXT:    [[INTS7:%[0-9]+]] = pg_ptx.alu setp.eq.s32 %x, [[INTS1]] : (i32, i32) -> i1
// CHECK-NEXT:    [[INTS8:%[0-9]+]] = pg_ptx.alu setp.eq.s32 %x, [[INTS3]] : (i32, i32) -> i1
// CHECK-NEXT:    [[INTS9:%[0-9]+]] = pg_ptx.alu or.pred [[INTS7]], [[INTS8]] : i1
// CHECK-NEXT:    [[INTS10:%[0-9]+]] = pg_ptx.alu selp.b32 [[INTS2]], %x, [[INTS9]] : (i32, i32, i1) -> i32
// CHECK-NEXT:    [[INTS11:%[0-9]+]] = pg_ptx.alu div.s32 %x, [[INTS10]] : i32
// CHECK-NEXT:    [[INTS12:%[0-9]+]] = pg_ptx.alu neg.s32 %x : i32
// CHECK-NEXT:    [[INTS13:%[0-9]+]] = pg_ptx.alu selp.b32 [[INTS12]], [[INTS11]], [[INTS8]] : (i32, i32, i1) -> i32
// CHECK-NEXT:    %q = pg_ptx.alu selp.b32 [[INTS1]], [[INTS13]], [[INTS7]] : (i32, i32, i1) -> i32
// CHECK-NEXT:    [[INTS14:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %l, [[INTS2]] : (i32, i32) -> i64
// CHECK-NEXT:    [[INTS15:%[0-9]+]] = pg_ptx.alu add.s64 %b_ptr, [[INTS14]] : i64
// CHECK-NEXT:    [[INTS16:%[0-9]+]] = pg_ptx.ld global.u8 [[[INTS15]]] : i32
// CHECK-NEXT:    %p = pg_ptx.alu setp.ne.s32 [[INTS16]], [[INTS1]] : (i32, i32) -> i1
// CHECK-NEXT:    %np = pg_ptx.alu not.pred %p : i1
// CHECK-NEXT:    [[INTS17:%[0-9]+]] = pg_ptx.alu selp.b32 [[INTS2]], [[INTS1]], %np : (i32, i32, i1) -> i32
// CHECK-NEXT:    pg_ptx.st global.u8 [[[INTS15]]], [[INTS17]] : i32
// CHECK-NEXT:    %half = pg_ptx.alu shr.u32 %l, [[INTS4]] : i32
// CHECK-NEXT:    [[INTS18:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %half, [[INTS4]] : (i32, i32) -> i64
// CHECK-NEXT:    [[INTS19:%[0-9]+]] = pg_ptx.alu add.s64 %h_ptr, [[INTS18]] : i64
// CHECK-NEXT:    [[INTS20:%[0-9]+]] = pg_ptx.ld global.b16 [[[INTS19]]] : f16
// CHECK-NEXT:    %y = pg_ptx.alu cvt.f32.f16 [[INTS20]] : (f16) -> f32
// CHECK-NEXT:    [[INTS21:%[0-9]+]] = pg_ptx.alu mul.rn.f32 %y, %y : f32
// CHECK-NEXT:    [[INTS22:%[0-9]+]] = pg_ptx.alu cvt.rn.f16.f32 [[INTS21]] : (f32) -> f16
// CHECK-NEXT:    %z = pg_ptx.alu cvt.f32.f16 [[INTS22]] : (f16) -> f32
// CHECK-NEXT:    [[INTS23:%[0-9]+]] = pg_ptx.alu mul.wide.s32 %l, [[INTS4]] : (i32, i32) -> i64
// CHECK-NEXT:    [[INTS24:%[0-9]+]] = pg_ptx.alu add.s64 %h_ptr, [[INTS23]] : i64
// CHECK-NEXT:    [[INTS25:%[0-9]+]] = pg_ptx.alu cvt.rn.f16.f32 %z : (f32) -> f16
// CHECK-NEXT:    pg_ptx.st global.b16 [[[INTS24]]], [[INTS25]] : f16
// CHECK-NEXT:    pg_ptx.st global.b32 [[[INTS6]]], %q : i32
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(%a: !pg.buffer<1000xf32>) -> !pg.buffer<1000xf32> {
// CHECK-NEXT:    %out = pg_sched.alloc : !pg.buffer<1000xf32>
// CHECK-NEXT:    pg_sched.launch @scale(%a, %out) : !pg.buffer<1000xf32>, !pg.buffer<1000xf32>
// CHECK-NEXT:    func.return %out : !pg.buffer<1000xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }

// PTX:       .version 7.0
// PTX-NEXT:  .target sm_80
// PTX-NEXT:  .address_size 64
// PTX-LABEL: .visible .entry scale(
// PTX-NEXT:    .param .u64 scale_param_0,
// PTX-NEXT:    .param .u64 scale_param_1
// PTX-NEXT:  )
// PTX-NEXT:  .maxntid 256, 1, 1
// PTX:         ld.param.u64 %rd0, [scale_param_0];
// PTX-NEXT:    cvta.to.global.u64 %rd1, %rd0;
// PTX:         mov.u32 %r0, %ctaid.x;
// PTX-NEXT:    mov.u32 %r1, %tid.x;
// PTX:         @!%p0 bra L0_endif;
// PTX-NEXT:    mul.wide.s32 %rd4, %r6, %r4;
// PTX-NEXT:    add.s64 %rd5, %rd1, %rd4;
// PTX-NEXT:    ld.global.f32 %f0, [%rd5];
// PTX-NEXT:    ex2.approx.f32 %f1, %f0;
// PTX-NEXT:    setp.gt.f32 %p1, %f1, %f0;
// PTX-NEXT:    setp.nan.f32 %p2, %f1, %f1;
// PTX-NEXT:    or.pred %p3, %p1, %p2;
// PTX-NEXT:    selp.f32 %f2, %f1, %f0, %p3;
// PTX:         st.global.f32 [%rd{{[0-9]+}}], %f2;
// PTX-NEXT:  L0_endif:
// PTX-NEXT:    ret;
// PTX-LABEL: .visible .entry sum(
// PTX:         .shared .align 4 .b8 sum_smem0[32];
// PTX:         mov.u64 %rd{{[0-9]+}}, sum_smem0;
// PTX:       L0_loop:
// PTX:         add.rn.f32
// PTX:         @%p0 bra L0_loop;
// PTX:         st.shared.f32
// PTX-NEXT:    bar.sync 0;
// PTX-LABEL: .visible .entry ints(
// PTX:         div.s32
// PTX:         ld.global.u8 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// PTX:         st.global.u8 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// PTX:         shr.u32
// PTX:         ld.global.b16 %h0, [%rd{{[0-9]+}}];
// PTX-NEXT:    cvt.f32.f16 %f0, %h0;
// PTX-NEXT:    mul.rn.f32 %f1, %f0, %f0;
// PTX-NEXT:    cvt.rn.f16.f32 %h1, %f1;
// PTX-NEXT:    cvt.f32.f16 %f2, %h1;
// PTX-NOT:   main

// SM90:      .version 7.8
// SM90-NEXT: .target sm_90

pg_uop.kernel @scale(%a: !pg.buffer<1000xf32>, %out: !pg.buffer<1000xf32>) {
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 0 size 256
  %c256 = pg_uop.const 256 : index
  %base = pg_uop.binary mul %g, %c256 : index
  %i = pg_uop.binary add %base, %l : index
  %n = pg_uop.const 1000 : index
  %ok = pg_uop.cmp lt %i, %n : index
  pg_uop.if %ok
  %x = pg_uop.load %a[%i] : !pg.buffer<1000xf32> -> f32
  %e = pg_uop.unary exp2 %x : f32
  %m = pg_uop.binary max %e, %x : f32
  pg_uop.store %m, %out[%i] : f32, !pg.buffer<1000xf32>
  pg_uop.endif
}
pg_uop.kernel @sum(%a: !pg.buffer<32xf32>, %out: !pg.buffer<1xf32>) {
  %l = pg_uop.special local_id 0 size 8
  %s = pg_uop.shared : !pg.buffer<8xf32>
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 4 reduce
  %c8 = pg_uop.const 8 : index
  %o = pg_uop.binary mul %j, %c8 : index
  %idx = pg_uop.binary add %o, %l : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %s[%l] : f32, !pg.buffer<8xf32>
  pg_uop.barrier
  %zero = pg_uop.const 0 : index
  %first = pg_uop.cmp eq %l, %zero : index
  pg_uop.if %first
  %t = pg_uop.load %s[%zero] : !pg.buffer<8xf32> -> f32
  pg_uop.store %t, %out[%zero] : f32, !pg.buffer<1xf32>
  pg_uop.endif
}
pg_uop.kernel @ints(%a: !pg.buffer<8xi32>, %b: !pg.buffer<8xi1>, %h: !pg.buffer<8xf16>) {
  %l = pg_uop.special local_id 0 size 8
  %x = pg_uop.load %a[%l] : !pg.buffer<8xi32> -> i32
  %q = pg_uop.binary div %x, %x : i32
  %p = pg_uop.load %b[%l] : !pg.buffer<8xi1> -> i1
  %np = pg_uop.unary not %p : i1
  pg_uop.store %np, %b[%l] : i1, !pg.buffer<8xi1>
  %c4 = pg_uop.const 4 : index
  %half = pg_uop.binary div %l, %c4 : index
  %y = pg_uop.load %h[%half] : !pg.buffer<8xf16> -> f16
  %z = pg_uop.binary mul %y, %y : f16
  pg_uop.store %z, %h[%l] : f16, !pg.buffer<8xf16>
  pg_uop.store %q, %a[%l] : i32, !pg.buffer<8xi32>
}
func.func @main(%a: !pg.buffer<1000xf32>) -> !pg.buffer<1000xf32> {
  %out = pg_sched.alloc : !pg.buffer<1000xf32>
  pg_sched.launch @scale(%a, %out) : !pg.buffer<1000xf32>, !pg.buffer<1000xf32>
  func.return %out : !pg.buffer<1000xf32>
}
