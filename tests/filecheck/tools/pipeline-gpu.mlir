// The default GPU pipelines (GPU_PTX, GPU_WGSL) pass by pass, from pg_tensor down to PTX and
// WGSL text: the same stages as the CPU up to `cse`, then the GPU mapping, legalisation and
// the target lowering. The kernel keeps its symbol name through every stage.
// RUN: opt-tool %s --emit=ptx --print-ir-after-all 2>&1 | filecheck %s --check-prefix=PTX
// RUN: opt-tool %s --emit=wgsl --print-ir-after-all 2>&1 | filecheck %s --check-prefix=WGSL
// The PTX assembles for both architectures CI checks:
// RUN: opt-tool %s --emit=ptx > %t.sm80.ptx && %python -c "from picograd.runtimes.ptxas import check_ptx; check_ptx(open('%t.sm80.ptx').read(), 'sm_80')"
// RUN: opt-tool %s --emit=uop | opt-tool -p 'uop-gpu-map{target=ptx},uop-legalize{target=ptx},uop-simplify,convert-uop-to-ptx' -t ptx-sm90 > %t.sm90.ptx && %python -c "from picograd.runtimes.ptxas import check_ptx; check_ptx(open('%t.sm90.ptx').read(), 'sm_90')"

// PTX:      // -----// IR Dump After convert-tensor-to-sched //----- //
// PTX:        pg_sched.kernel @[[K:k[0-9]+]](
// PTX:      // -----// IR Dump After cse //----- //
// PTX:        pg_uop.kernel @[[K]](
// PTX:          pg_uop.range 0 to 4 global
// PTX:      // -----// IR Dump After uop-gpu-map //----- //
// PTX:        pg_uop.kernel @[[K]](
// PTX-NOT:      pg_uop.range {{.*}} global
// PTX:          pg_uop.special local_id 0 size 4
// PTX:      // -----// IR Dump After uop-legalize //----- //
// PTX:          pg_uop.unary exp2
// PTX-NOT:      pg_uop.unary exp %
// PTX:      // -----// IR Dump After convert-uop-to-ptx //----- //
// PTX-NOT:    pg_uop.
// PTX:        pg_ptx.entry @[[K]](
// PTX-SAME:     grid [1, 1, 1] block [4, 1, 1]
// PTX:        func.func @main(
// PTX:          pg_sched.launch @[[K]](
// PTX-NOT:  IR Dump After
// PTX:      .target sm_80
// PTX:      .visible .entry [[K]](
// PTX:        mov.u32 %r{{[0-9]+}}, %tid.x;
// PTX:        ex2.approx.f32
// PTX:        ret;

// WGSL:      // -----// IR Dump After uop-gpu-map //----- //
// WGSL:          pg_uop.special local_id 0 size 4
// WGSL:      // -----// IR Dump After uop-legalize //----- //
// WGSL:          pg_uop.unary exp
// WGSL:      // -----// IR Dump After convert-uop-to-wgsl //----- //
// WGSL:        pg_wgsl.fn @[[K:k[0-9]+]](
// WGSL-SAME:     grid [1, 1, 1] block [4, 1, 1]
// WGSL-NOT:  IR Dump After
// WGSL:      @compute @workgroup_size(4, 1, 1)
// WGSL-NEXT: fn [[K]](
// WGSL:        exp(
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %e = pg_tensor.unary exp %m : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
