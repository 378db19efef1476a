// The flat (xDSL) and anchored (MLIR) pipeline forms run the same passes; nested anchors
// are accepted and their passes run on the whole module.
// RUN: opt-tool %s -p tensor-simplify,cse --print-ir-after-all 2>&1 | filecheck %s
// RUN: opt-tool %s --pass-pipeline='builtin.module(tensor-simplify,func.func(cse))' --print-ir-after-all 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump After tensor-simplify //----- //
// CHECK:        %[[E1:.*]] = pg_tensor.unary exp %x : tensor<4xf32>
// CHECK-NEXT:   %[[E2:.*]] = pg_tensor.unary exp %x : tensor<4xf32>
// CHECK-NEXT:   func.return %[[E1]], %[[E2]] :
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK:        %[[E:.*]] = pg_tensor.unary exp %x : tensor<4xf32>
// CHECK-NEXT:   func.return %[[E]], %[[E]] :
// The result on stdout comes after the last dump.
// CHECK-NOT:  IR Dump After
// CHECK:      builtin.module {
// CHECK:        %[[R:.*]] = pg_tensor.unary exp %x : tensor<4xf32>
// CHECK-NEXT:   func.return %[[R]], %[[R]] :
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = pg_tensor.const 1.0 : tensor<4xf32>
  %a = pg_tensor.binary mul %x, %one : tensor<4xf32>
  %e1 = pg_tensor.unary exp %a : tensor<4xf32>
  %e2 = pg_tensor.unary exp %x : tensor<4xf32>
  func.return %e1, %e2 : tensor<4xf32>, tensor<4xf32>
}
