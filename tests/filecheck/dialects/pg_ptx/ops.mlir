// Every pg_ptx op: the custom form prints as written, survives custom -> generic -> custom,
// and the generic form survives generic -> generic; -t ptx prints each op as its statement.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: opt-tool %s -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: pg_ptx.entry @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xi1>) grid [2, 1, 1] block [32, 1, 1] {
// CHECK-NEXT:    %pa = pg_ptx.ld_param %a : !pg.buffer<64xf32>
// CHECK-NEXT:    %ga = pg_ptx.alu cvta.to.global.u64 %pa : i64
// CHECK-NEXT:    %four = pg_ptx.const 4 : i32
// CHECK-NEXT:    %t = pg_ptx.const 1 : i1
// CHECK-NEXT:    %h = pg_ptx.const 1.5 : f16
// CHECK-NEXT:    %tid = pg_ptx.sreg tid.x
// CHECK-NEXT:    %off = pg_ptx.alu mul.wide.s32 %tid, %four : (i32, i32) -> i64
// CHECK-NEXT:    %at = pg_ptx.alu add.s64 %ga, %off : i64
// CHECK-NEXT:    %x = pg_ptx.ld global.f32 [%at] : f32
// CHECK-NEXT:    %ok = pg_ptx.alu setp.lt.s32 %tid, %four : (i32, i32) -> i1
// CHECK-NEXT:    %w = pg_ptx.ld global.f32 [%at] if %ok else -inf : f32
// CHECK-NEXT:    %b = pg_ptx.ld global.u8 [%at] if %ok else 1 : i32
// CHECK-NEXT:    %s = pg_ptx.shared smem0 : !pg.buffer<32xf32>
// CHECK-NEXT:    pg_ptx.st shared.f32 [%s], %x : f32
// CHECK-NEXT:    pg_ptx.bar_sync
// CHECK-NEXT:    %acc = pg_ptx.reg : f32
// CHECK-NEXT:    pg_ptx.write %acc, %w : f32
// CHECK-NEXT:    pg_ptx.label L0_loop
// CHECK-NEXT:    %old = pg_ptx.read %acc : f32
// CHECK-NEXT:    %y = pg_ptx.alu fma.rn.f32 %old, %x, %w : f32
// CHECK-NEXT:    %p = pg_ptx.alu selp.f32 %y, %x, %ok : (f32, f32, i1) -> f32
// CHECK-NEXT:    pg_ptx.write %acc, %p : f32
// CHECK-NEXT:    pg_ptx.bra L0_loop if %ok
// CHECK-NEXT:    pg_ptx.bra L1_end if not %ok
// CHECK-NEXT:    pg_ptx.bra L1_end
// CHECK-NEXT:    pg_ptx.label L1_end
// CHECK-NEXT:    pg_ptx.st global.u8 [%at], %b : i32
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_ptx.entry @empty(%a: !pg.buffer<4xf64>) grid [1, 1, 1] block [1, 1, 1] {
// CHECK-NEXT:  }
// CHECK-NEXT:  }

// GENERIC-LABEL: "pg_ptx.entry"() <{sym_name = "k0", grid = array<i64: 2, 1, 1>, block = array<i64: 32, 1, 1>}> ({
// GENERIC-NEXT:    ^bb0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xi1>):
// GENERIC-NEXT:    %pa = "pg_ptx.ld_param"(%a) : (!pg.buffer<64xf32>) -> i64
// GENERIC-NEXT:    %ga = "pg_ptx.alu"(%pa) <{opcode = "cvta.to.global.u64"}> : (i64) -> i64
// GENERIC:         %t = "pg_ptx.const"() <{value = true}> : () -> i1
// GENERIC:         %tid = "pg_ptx.sreg"() <{register = "tid.x"}> : () -> i32
// GENERIC:         %w = "pg_ptx.ld"(%at, %ok) <{space = "global", mem_type = "f32", other = 0xff800000 : f32}> : (i64, i1) -> f32
// GENERIC:         %s = "pg_ptx.shared"() <{symbol = "smem0", buffer_type = !pg.buffer<32xf32>}> : () -> i64
// GENERIC:         %acc = "pg_ptx.reg"() : () -> !pg_ptx.reg<f32>
// GENERIC:         "pg_ptx.bra"(%ok) <{target = "L1_end", negate}> : (i1) -> ()
// GENERIC:         "pg_ptx.st"(%at, %b) <{space = "global", mem_type = "u8"}> : (i64, i32) -> ()
// GENERIC:       "pg_ptx.entry"() <{sym_name = "empty", grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>}> ({
// GENERIC-NEXT:    ^bb0(%a: !pg.buffer<4xf64>):
// GENERIC-NEXT:  }) : () -> ()

// PTX:       .version 7.0
// PTX-NEXT:  .target sm_80
// PTX-NEXT:  .address_size 64
// PTX-EMPTY:
// PTX-NEXT:  .visible .entry k0(
// PTX-NEXT:  	.param .u64 k0_param_0,
// PTX-NEXT:  	.param .u64 k0_param_1
// PTX-NEXT:  )
// PTX-NEXT:  .maxntid 32, 1, 1
// PTX-NEXT:  {
// PTX-NEXT:  	.reg .pred %p<2>;
// PTX-NEXT:  	.reg .b16 %h<1>;
// PTX-NEXT:  	.reg .b32 %r<3>;
// PTX-NEXT:  	.reg .b64 %rd<5>;
// PTX-NEXT:  	.reg .f32 %f<6>;
// PTX-NEXT:  	.shared .align 4 .b8 smem0[128];
// PTX-EMPTY:
// PTX-NEXT:  	ld.param.u64 %rd0, [k0_param_0];
// PTX-NEXT:  	cvta.to.global.u64 %rd1, %rd0;
// PTX-NEXT:  	mov.b32 %r0, 4;
// PTX-NEXT:  	mov.pred %p0, 1;
// PTX-NEXT:  	mov.b16 %h0, 0x3E00;
// PTX-NEXT:  	mov.u32 %r1, %tid.x;
// PTX-NEXT:  	mul.wide.s32 %rd2, %r1, %r0;
// PTX-NEXT:  	add.s64 %rd3, %rd1, %rd2;
// PTX-NEXT:  	ld.global.f32 %f0, [%rd3];
// PTX-NEXT:  	setp.lt.s32 %p1, %r1, %r0;
// PTX-NEXT:  	mov.f32 %f1, 0fFF800000;
// PTX-NEXT:  	@%p1 ld.global.f32 %f1, [%rd3];
// PTX-NEXT:  	mov.b32 %r2, 1;
// PTX-NEXT:  	@%p1 ld.global.u8 %r2, [%rd3];
// PTX-NEXT:  	mov.u64 %rd4, smem0;
// PTX-NEXT:  	st.shared.f32 [%rd4], %f0;
// PTX-NEXT:  	bar.sync 0;
// PTX-NEXT:  	mov.f32 %f2, %f1;
// PTX-NEXT:  L0_loop:
// PTX-NEXT:  	mov.f32 %f3, %f2;
// PTX-NEXT:  	fma.rn.f32 %f4, %f3, %f0, %f1;
// PTX-NEXT:  	selp.f32 %f5, %f4, %f0, %p1;
// PTX-NEXT:  	mov.f32 %f2, %f5;
// PTX-NEXT:  	@%p1 bra L0_loop;
// PTX-NEXT:  	@!%p1 bra L1_end;
// PTX-NEXT:  	bra.uni L1_end;
// PTX-NEXT:  L1_end:
// PTX-NEXT:  	st.global.u8 [%rd3], %r2;
// PTX-NEXT:  	ret;
// PTX-NEXT:  }
// PTX-EMPTY:
// PTX-NEXT:  .visible .entry empty(
// PTX-NEXT:  	.param .u64 empty_param_0
// PTX-NEXT:  )
// PTX-NEXT:  .maxntid 1, 1, 1
// PTX-NEXT:  {
// PTX-EMPTY:
// PTX-NEXT:  	ret;
// PTX-NEXT:  }

pg_ptx.entry @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xi1>) grid [2, 1, 1] block [32, 1, 1] {
  %pa = pg_ptx.ld_param %a : !pg.buffer<64xf32>
  %ga = pg_ptx.alu cvta.to.global.u64 %pa : i64
  %four = pg_ptx.const 4 : i32
  %t = pg_ptx.const 1 : i1
  %h = pg_ptx.const 1.5 : f16
  %tid = pg_ptx.sreg tid.x
  %off = pg_ptx.alu mul.wide.s32 %tid, %four : (i32, i32) -> i64
  %at = pg_ptx.alu add.s64 %ga, %off : i64
  %x = pg_ptx.ld global.f32 [%at] : f32
  %ok = pg_ptx.alu setp.lt.s32 %tid, %four : (i32, i32) -> i1
  %w = pg_ptx.ld global.f32 [%at] if %ok else -inf : f32
  %b = pg_ptx.ld global.u8 [%at] if %ok else 1 : i32
  %s = pg_ptx.shared smem0 : !pg.buffer<32xf32>
  pg_ptx.st shared.f32 [%s], %x : f32
  pg_ptx.bar_sync
  %acc = pg_ptx.reg : f32
  pg_ptx.write %acc, %w : f32
  pg_ptx.label L0_loop
  %old = pg_ptx.read %acc : f32
  %y = pg_ptx.alu fma.rn.f32 %old, %x, %w : f32
  %p = pg_ptx.alu selp.f32 %y, %x, %ok : (f32, f32, i1) -> f32
  pg_ptx.write %acc, %p : f32
  pg_ptx.bra L0_loop if %ok
  pg_ptx.bra L1_end if not %ok
  pg_ptx.bra L1_end
  pg_ptx.label L1_end
  pg_ptx.st global.u8 [%at], %b : i32
}
pg_ptx.entry @empty(%a: !pg.buffer<4xf64>) grid [1, 1, 1] block [1, 1, 1] {
}
