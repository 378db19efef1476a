// RUN: opt-tool %s -p 'tensor-split-reduce' | filecheck %s
// RUN: opt-tool %s -p 'tensor-split-reduce{min-elements=1048577}' | filecheck %s --check-prefix=SHORT
// RUN: not opt-tool %s -p 'tensor-split-reduce{work=0}' 2>&1 | filecheck %s --check-prefix=BAD

// A sum of 2**20 elements into 256 partials of 4096, then the partials; a row max over
// 65536 columns of 4 rows splits the columns the same way (4 x 16 partials); a reduce of
// fewer elements is left alone.
// CHECK-LABEL: func.func @main
// CHECK:         %[[V:.*]] = pg_tensor.reshape %{{.*}} : tensor<1048576xf32> -> tensor<256x4096xf32>
// CHECK-NEXT:    %[[P:.*]] = pg_tensor.reduce sum %[[V]] {axes = array<i64: 1>} : tensor<256x4096xf32> -> tensor<256x1xf32>
// CHECK-NEXT:    %[[S:.*]] = pg_tensor.reduce sum %[[P]] {axes = array<i64: 0>} : tensor<256x1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %{{.*}} = pg_tensor.reshape %[[S]] : tensor<1x1xf32> -> tensor<1xf32>
// CHECK:         pg_tensor.reshape %{{.*}} : tensor<4x65536xf32> -> tensor<4x16x4096xf32>
// CHECK-NEXT:    pg_tensor.reduce max %{{.*}} {axes = array<i64: 2>} : tensor<4x16x4096xf32> -> tensor<4x16x1xf32>
// CHECK-NEXT:    pg_tensor.reduce max %{{.*}} {axes = array<i64: 1>} : tensor<4x16x1xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    pg_tensor.reshape %{{.*}} : tensor<4x1x1xf32> -> tensor<4x1xf32>
// CHECK:         pg_tensor.reduce sum %{{.*}} {axes = array<i64: 0>} : tensor<100xf32> -> tensor<1xf32>
// A prime length (65537) has no divisor: a min pads it with the highest i32 to 17 chunks
// of 3856, the last one 3841 elements and 15 of padding.
// CHECK:         %[[PAD:.*]] = pg_tensor.pad %d low [0] high [15] value 2147483647 : tensor<65537xi32> -> tensor<65552xi32>
// CHECK-NEXT:    %[[V:.*]] = pg_tensor.reshape %[[PAD]] : tensor<65552xi32> -> tensor<17x3856xi32>
// CHECK-NEXT:    pg_tensor.reduce min %[[V]] {axes = array<i64: 1>} : tensor<17x3856xi32> -> tensor<17x1xi32>

// SHORT-NOT:     pg_tensor.reshape
// BAD: tensor-split-reduce: min-elements and max-partials must be at least 2, work at least 1
func.func @main(%a: tensor<1048576xf32>, %b: tensor<4x65536xf32>, %c: tensor<100xf32>,
                %d: tensor<65537xi32>) -> (tensor<1xf32>, tensor<4x1xf32>, tensor<1xf32>,
                                          tensor<1xi32>) {
  %s = pg_tensor.reduce sum %a {axes = array<i64: 0>} : tensor<1048576xf32> -> tensor<1xf32>
  %m = pg_tensor.reduce max %b {axes = array<i64: 1>} : tensor<4x65536xf32> -> tensor<4x1xf32>
  %t = pg_tensor.reduce sum %c {axes = array<i64: 0>} : tensor<100xf32> -> tensor<1xf32>
  %n = pg_tensor.reduce min %d {axes = array<i64: 0>} : tensor<65537xi32> -> tensor<1xi32>
  func.return %s, %m, %t, %n : tensor<1xf32>, tensor<4x1xf32>, tensor<1xf32>, tensor<1xi32>
}
