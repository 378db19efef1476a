// Shifts, bitcast and iota from pg_tensor down to every target: iota becomes the cast of its
// axis' loop index (no buffer), a bitcast the target's reinterpretation (a C union, LLVM
// bitcast, WGSL bitcast<T>, PTX mov.b32), and a shift masks its amount to the bit width
// (pg.BinaryKind.SHL/SHR: amounts modulo the width), natively on WGSL.
// RUN: opt-tool %s --emit loop | filecheck %s --check-prefix=LOOP
// RUN: opt-tool %s --emit c | filecheck %s --check-prefix=C
// RUN: opt-tool %s --emit llvm | filecheck %s --check-prefix=LLVM
// RUN: opt-tool %s --emit wgsl | filecheck %s --check-prefix=WGSL
// RUN: opt-tool %s --emit ptx | filecheck %s --check-prefix=PTX

// LOOP:      pg_loop.kernel @k0(%x: !pg.buffer<4xf32>, %n: !pg.buffer<4xi32>, %out: !pg.buffer<4xi32>) {
// LOOP-NEXT:   pg_loop.range %i0 = 0 to 4 global {
// LOOP-NEXT:     %0 = pg_loop.load %x[%i0] : !pg.buffer<4xf32> -> f32
// LOOP-NEXT:     %1 = pg_uop.bitcast %0 : f32 to i32
// LOOP-NEXT:     %2 = pg_loop.load %n[%i0] : !pg.buffer<4xi32> -> i32
// LOOP-NEXT:     %3 = pg_uop.binary shl %1, %2 : i32
// LOOP-NEXT:     %4 = pg_uop.cast %i0 : index to i32
// LOOP-NEXT:     %5 = pg_uop.binary shr %3, %4 : i32
// LOOP-NEXT:     pg_loop.store %5, %out[%i0] : i32, !pg.buffer<4xi32>

// C:      float v1 = p0[i0_i0];
// C-NEXT: int32_t v2 = (union { float s; int32_t d; }){ .s = v1 }.d;
// C-NEXT: int32_t v3 = p1[i0_i0];
// C-NEXT: int32_t v4 = (int32_t)((uint32_t)v2 << (v3 & 31));
// C-NEXT: int32_t v5 = (int32_t)i0_i0;
// C-NEXT: int32_t v6 = (int32_t)(v4 >> (v5 & 31));

// LLVM:      %[[F:.*]] = load float
// LLVM-NEXT: %[[B:.*]] = bitcast float %[[F]] to i32
// LLVM:      %[[N:.*]] = load i32
// LLVM-NEXT: %[[M:.*]] = and i32 %[[N]], 31
// LLVM-NEXT: %[[S:.*]] = shl i32 %[[B]], %[[M]]
// LLVM-NEXT: %[[I:.*]] = trunc i64 %{{.*}} to i32
// LLVM-NEXT: %[[K:.*]] = and i32 %[[I]], 31
// LLVM-NEXT: %{{.*}} = ashr i32 %[[S]], %[[K]]

// WGSL:      let v2 = bitcast<i32>(v1);
// WGSL-NEXT: let v3 = k0_p1[v0_lid0];
// WGSL-NEXT: let v4 = v2 << (u32(v3) & 31u);
// WGSL-NEXT: let v5 = v4 >> (u32(v0_lid0) & 31u);

// PTX:      mov.b32 %r2, 31;
// PTX:      ld.global.f32 %f0, [%rd7];
// PTX-NEXT: mov.b32 %r3, %f0;
// PTX:      and.b32 %r5, %r4, %r2;
// PTX-NEXT: shl.b32 %r6, %r3, %r5;
// PTX-NEXT: and.b32 %r7, %r0, %r2;
// PTX-NEXT: shr.s32 %r8, %r6, %r7;

func.func @main(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<4xi32> {
  %b = pg_tensor.bitcast %x : tensor<4xf32> to tensor<4xi32>
  %k = pg_tensor.iota {axis = 0} : tensor<4xi32>
  %s = pg_tensor.binary shl %b, %n : tensor<4xi32>
  %r = pg_tensor.binary shr %s, %k : tensor<4xi32>
  func.return %r : tensor<4xi32>
}
