// RUN: opt-tool %s -p tensor-simplify | filecheck %s

// CHECK-LABEL: func.func @float_identities(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @float_identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = pg_tensor.const 1.0 : tensor<4xf32>
  %mzero = pg_tensor.const -0.0 : tensor<4xf32>
  %zero = pg_tensor.const 0.0 : tensor<4xf32>
  %a = pg_tensor.binary mul %one, %x : tensor<4xf32>
  %b = pg_tensor.binary add %x, %mzero : tensor<4xf32>
  %c = pg_tensor.binary sub %x, %zero : tensor<4xf32>
  %d = pg_tensor.binary div %x, %one : tensor<4xf32>
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// x+0.0 is not x for x = -0.0, and x*0.0 is not 0.0 for inf or nan: both stay.
// CHECK-LABEL: func.func @float_non_identities(
// CHECK:         %[[Z:.*]] = pg_tensor.const 0.0 : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = pg_tensor.binary add %{{.*}}, %[[Z]] : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = pg_tensor.binary mul %{{.*}}, %[[Z]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[M]]
func.func @float_non_identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = pg_tensor.const 0.0 : tensor<4xf32>
  %a = pg_tensor.binary add %x, %zero : tensor<4xf32>
  %m = pg_tensor.binary mul %x, %zero : tensor<4xf32>
  func.return %a, %m : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @int_identities(
// CHECK-SAME:      %[[X:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[Z1:.*]] = pg_tensor.const 0 : tensor<4xi32>
// CHECK-NEXT:    %[[Z2:.*]] = pg_tensor.const 0 : tensor<4xi32>
// CHECK-NEXT:    func.return %[[X]], %[[Z1]], %[[Z2]], %[[X]] :
func.func @int_identities(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = pg_tensor.const 0 : tensor<4xi32>
  %one = pg_tensor.const 1 : tensor<4xi32>
  %a = pg_tensor.binary add %zero, %x : tensor<4xi32>
  %b = pg_tensor.binary mul %x, %zero : tensor<4xi32>
  %c = pg_tensor.binary mod %x, %one : tensor<4xi32>
  %n = pg_tensor.unary neg %x : tensor<4xi32>
  %d = pg_tensor.unary neg %n : tensor<4xi32>
  func.return %a, %b, %c, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @constant_folding(
// CHECK-DAG:     %[[F:.*]] = pg_tensor.const 0.3333333432674408 : tensor<2xf32>
// CHECK-DAG:     %[[I:.*]] = pg_tensor.const -3 : tensor<2xi32>
// CHECK-DAG:     %[[B:.*]] = pg_tensor.const 1 : tensor<2xi1>
// CHECK-DAG:     %[[C:.*]] = pg_tensor.const -2 : tensor<2xi8>
// CHECK:         func.return %[[F]], %[[I]], %[[B]], %[[C]] :
func.func @constant_folding() -> (tensor<2xf32>, tensor<2xi32>, tensor<2xi1>, tensor<2xi8>) {
  %one = pg_tensor.const 1.0 : tensor<2xf32>
  %three = pg_tensor.const 3.0 : tensor<2xf32>
  %third = pg_tensor.binary div %one, %three : tensor<2xf32>
  %m7 = pg_tensor.const -7 : tensor<2xi32>
  %two = pg_tensor.const 2 : tensor<2xi32>
  %q = pg_tensor.binary div %m7, %two : tensor<2xi32>
  %nan = pg_tensor.const nan : tensor<2xf32>
  %ne = pg_tensor.cmp ne %nan, %nan : tensor<2xf32> -> tensor<2xi1>
  %big = pg_tensor.const 254 : tensor<2xi32>
  %wrapped = pg_tensor.cast %big : tensor<2xi32> to tensor<2xi8>
  func.return %third, %q, %ne, %wrapped : tensor<2xf32>, tensor<2xi32>, tensor<2xi1>, tensor<2xi8>
}

// Integer division by zero is undefined in C: it is left for run time.
// CHECK-LABEL: func.func @no_fold_of_undefined(
// CHECK:         pg_tensor.binary div
// CHECK:         pg_tensor.cast %{{.*}} : tensor<2xf32> to tensor<2xi32>
func.func @no_fold_of_undefined() -> (tensor<2xi32>, tensor<2xi32>) {
  %one = pg_tensor.const 1 : tensor<2xi32>
  %zero = pg_tensor.const 0 : tensor<2xi32>
  %q = pg_tensor.binary div %one, %zero : tensor<2xi32>
  %inf = pg_tensor.const inf : tensor<2xf32>
  %c = pg_tensor.cast %inf : tensor<2xf32> to tensor<2xi32>
  func.return %q, %c : tensor<2xi32>, tensor<2xi32>
}

// CHECK-LABEL: func.func @select_and_cast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>, %[[I:[^:]*]]: tensor<4xi8>)
// CHECK-NEXT:    %[[C:.*]] = pg_tensor.cast %[[I]] : tensor<4xi8> to tensor<4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[Y]], %[[X]], %[[C]] :
func.func @select_and_cast(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = pg_tensor.const 1 : tensor<4xi1>
  %c = pg_tensor.cmp lt %x, %y : tensor<4xf32> -> tensor<4xi1>
  %a = pg_tensor.where %t, %x, %y : tensor<4xi1>, tensor<4xf32>
  %f = pg_tensor.binary xor %t, %t : tensor<4xi1>
  %b = pg_tensor.where %f, %x, %y : tensor<4xi1>, tensor<4xf32>
  %s = pg_tensor.where %c, %x, %x : tensor<4xi1>, tensor<4xf32>
  %same = pg_tensor.cast %x : tensor<4xf32> to tensor<4xf32>
  %wide = pg_tensor.cast %i : tensor<4xi8> to tensor<4xi32>
  %back = pg_tensor.cast %wide : tensor<4xi32> to tensor<4xf32>
  func.return %a, %b, %s, %back : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A narrowing inner cast changes values: the pair stays.
// CHECK-LABEL: func.func @lossy_double_cast(
// CHECK:         pg_tensor.cast %{{.*}} : tensor<4xi32> to tensor<4xi8>
// CHECK-NEXT:    pg_tensor.cast %{{.*}} : tensor<4xi8> to tensor<4xi32>
func.func @lossy_double_cast(%x: tensor<4xi32>) -> tensor<4xi32> {
  %n = pg_tensor.cast %x : tensor<4xi32> to tensor<4xi8>
  %w = pg_tensor.cast %n : tensor<4xi8> to tensor<4xi32>
  func.return %w : tensor<4xi32>
}

// CHECK-LABEL: func.func @views(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = pg_tensor.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    %[[P:.*]] = pg_tensor.permute %[[X]] {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %[[F:.*]] = pg_tensor.flip %[[X]] {axes = array<i64: 0, 2>} : tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[X]], %[[P]], %[[F]], %[[X]], %[[X]] :
func.func @views(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %r1 = pg_tensor.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %r2 = pg_tensor.reshape %r1 : tensor<6x4xf32> -> tensor<24xf32>
  %r3 = pg_tensor.reshape %r2 : tensor<24xf32> -> tensor<2x3x4xf32>
  %p1 = pg_tensor.permute %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %p2 = pg_tensor.permute %p1 {perm = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  %f1 = pg_tensor.flip %x {axes = array<i64: 0, 1>} : tensor<2x3x4xf32>
  %f2 = pg_tensor.flip %f1 {axes = array<i64: 1, 2>} : tensor<2x3x4xf32>
  %e = pg_tensor.expand %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %pad = pg_tensor.pad %e low [0, 0, 0] high [0, 0, 0] value 0.0 : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %s = pg_tensor.slice %x {start = array<i64: 0, 0, 0>, step = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %r2, %r3, %p2, %f2, %pad, %s : tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @views_of_splats(
// CHECK-DAG:     %[[A:.*]] = pg_tensor.const 2.5 : tensor<3x2xf32>
// CHECK-DAG:     %[[B:.*]] = pg_tensor.const 2.5 : tensor<4x3xf32>
// CHECK-DAG:     %[[C:.*]] = pg_tensor.pad
// CHECK:         func.return %[[A]], %[[B]], %[[C]] :
func.func @views_of_splats() -> (tensor<3x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %c = pg_tensor.const 2.5 : tensor<2x3xf32>
  %p = pg_tensor.permute %c {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %same = pg_tensor.pad %c low [1, 0] high [1, 0] value 2.5 : tensor<2x3xf32> -> tensor<4x3xf32>
  %other = pg_tensor.pad %c low [1, 0] high [1, 0] value 0.0 : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %p, %same, %other : tensor<3x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @reduces(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x1xf32>
// CHECK-DAG:     %[[M:.*]] = pg_tensor.const -inf : tensor<1x3xf32>
// CHECK-DAG:     %[[S:.*]] = pg_tensor.reduce sum %[[X]]
// CHECK:         func.return %[[M]], %[[X]], %[[S]] :
func.func @reduces(%x: tensor<4x1xf32>) -> (tensor<1x3xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %c = pg_tensor.const -inf : tensor<2x3xf32>
  %m = pg_tensor.reduce max %c {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<1x3xf32>
  %one = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x1xf32> -> tensor<4x1xf32>
  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %m, %one, %s : tensor<1x3xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
