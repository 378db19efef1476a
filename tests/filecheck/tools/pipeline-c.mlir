// The C pipeline (CPU_C) pass by pass, from pg_tensor down to C source. It agrees with
// CPU_LLVM up to the pg_uop stage (pipeline-llvm.mlir), then lowers to pg_c.
// RUN: opt-tool %s --emit=c --print-ir-after-all 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump After tensor-simplify //----- //
// CHECK:      // -----// IR Dump After convert-tensor-to-sched //----- //
// CHECK:        pg_sched.kernel @[[K:k[0-9]+]](
// CHECK:      // -----// IR Dump After convert-sched-to-loop //----- //
// CHECK:        pg_loop.kernel @[[K]](
// CHECK:      // -----// IR Dump After loop-simplify //----- //
// CHECK:      // -----// IR Dump After convert-loop-to-uop //----- //
// CHECK:        pg_uop.kernel @[[K]](
// CHECK:      // -----// IR Dump After uop-simplify //----- //
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK:      // -----// IR Dump After convert-uop-to-c //----- //
// CHECK-NOT:    pg_uop.
// CHECK:        pg_c.func @[[K]](
// CHECK:        func.func @main(
// CHECK:          pg_sched.launch @[[K]](
// The C source on stdout, after the last dump.
// CHECK-NOT:  IR Dump After
// CHECK:      void [[K]](
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
