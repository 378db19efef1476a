// --time-passes: after the pipeline, a table of wall time per pass and the total goes to
// stderr (stdout still holds the output). The times vary; the rows and their order do not.
// RUN: opt-tool %s --emit=llvm --time-passes 2>&1 >/dev/null | filecheck %s
// RUN: opt-tool %s -p tensor-simplify,cse --time-passes 2>/dev/null | filecheck %s --check-prefix=OUT
// Without the flag nothing is timed:
// RUN: opt-tool %s --emit=llvm 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=NONE

// CHECK:      Pass execution timing report
// CHECK:        Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  tensor-simplify
// CHECK-NEXT:   {{.*}}  matmul-layout
// CHECK-NEXT:   {{.*}}  tensor-split-reduce
// CHECK-NEXT:   {{.*}}  convert-tensor-to-sched
// CHECK-NEXT:   {{.*}}  sched-dedup
// CHECK-NEXT:   {{.*}}  convert-sched-to-loop
// CHECK-NEXT:   {{.*}}  loop-simplify
// CHECK-NEXT:   {{.*}}  loop-optimize
// CHECK-NEXT:   {{.*}}  loop-unswitch
// CHECK-NEXT:   {{.*}}  convert-loop-to-uop
// CHECK-NEXT:   {{.*}}  uop-simplify
// CHECK-NEXT:   {{.*}}  cse
// CHECK-NEXT:   {{.*}}  uop-contract
// CHECK-NEXT:   {{.*}}  convert-uop-to-llvm
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \(100\.0%\)}}  Total

// OUT:     func.func @main
// OUT-NOT: Pass execution timing report

// NONE-NOT: Pass execution timing report

func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
