// Every pg_sched op: the custom form prints as written (normalized), survives
// custom -> generic -> custom, and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: pg_sched.kernel @k0(
// CHECK-NEXT:  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k0"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>):
// GENERIC-NEXT: %x = "pg_sched.load"(%a) : (!pg.buffer<32xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %s = "pg_tensor.reduce"(%x) <{kind = #pg<reduce sum>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
// GENERIC-NEXT: "pg_sched.store"(%s, %out) : (tensor<4x1xf32>, !pg.buffer<4xf32>) -> ()
// GENERIC-NEXT: }) : () -> ()
pg_sched.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
  %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
}

// CHECK-LABEL: pg_sched.kernel @k1(
// CHECK-NEXT:  %x = pg_sched.load %t : !pg.buffer<4xf32> -> tensor<4xf32>
// CHECK-NEXT:  %y = pg_tensor.unary exp %x : tensor<4xf32>
// CHECK-NEXT:  pg_sched.store %y, %out : tensor<4xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:  %c = pg_tensor.const 0 : tensor<2x2xi1>
// CHECK-NEXT:  pg_sched.store %c, %b : tensor<2x2xi1>, !pg.buffer<4xi1>
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k1"
// GENERIC-NEXT: ^bb0(%t: !pg.buffer<4xf32>, %b: !pg.buffer<4xi1>, %out: !pg.buffer<4xf32>):
// GENERIC-NEXT: %x = "pg_sched.load"(%t) : (!pg.buffer<4xf32>) -> tensor<4xf32>
// GENERIC-NEXT: %y = "pg_tensor.unary"(%x) <{kind = #pg<unary exp>}> : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC-NEXT: "pg_sched.store"(%y, %out) : (tensor<4xf32>, !pg.buffer<4xf32>) -> ()
// GENERIC-NEXT: %c = "pg_tensor.const"() <{value = false}> : () -> tensor<2x2xi1>
// GENERIC-NEXT: "pg_sched.store"(%c, %b) : (tensor<2x2xi1>, !pg.buffer<4xi1>) -> ()
// GENERIC-NEXT: }) {note = "two stores"} : () -> ()
pg_sched.kernel @k1(%t: !pg.buffer<4xf32>, %b: !pg.buffer<4xi1>, %out: !pg.buffer<4xf32>) attributes {note = "two stores"} {
  %x = pg_sched.load %t : !pg.buffer<4xf32> -> tensor<4xf32>
  %y = pg_tensor.unary exp %x : tensor<4xf32>
  pg_sched.store %y, %out : tensor<4xf32>, !pg.buffer<4xf32>
  %c = pg_tensor.const 0 : tensor<2x2xi1>
  pg_sched.store %c, %b : tensor<2x2xi1>, !pg.buffer<4xi1>
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:  %t = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:  %b = pg_sched.alloc {tag = 1 : i64} : !pg.buffer<4xi1>
// CHECK-NEXT:  %r = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:  pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:  pg_sched.launch @k1(%t, %b, %r) : !pg.buffer<4xf32>, !pg.buffer<4xi1>, !pg.buffer<4xf32>
// CHECK-NEXT:  pg_sched.launch @k0(%a, %t) {invariant} : !pg.buffer<32xf32>, !pg.buffer<4xf32>
// CHECK-NEXT:  func.return %r, %b : !pg.buffer<4xf32>, !pg.buffer<4xi1>
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "main"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<32xf32>):
// GENERIC-NEXT: %t = "pg_sched.alloc"() : () -> !pg.buffer<4xf32>
// GENERIC-NEXT: %b = "pg_sched.alloc"() {tag = 1 : i64} : () -> !pg.buffer<4xi1>
// GENERIC-NEXT: %r = "pg_sched.alloc"() : () -> !pg.buffer<4xf32>
// GENERIC-NEXT: "pg_sched.launch"(%a, %t) <{kernel = @k0}> : (!pg.buffer<32xf32>, !pg.buffer<4xf32>) -> ()
// GENERIC-NEXT: "pg_sched.launch"(%t, %b, %r) <{kernel = @k1}> : (!pg.buffer<4xf32>, !pg.buffer<4xi1>, !pg.buffer<4xf32>) -> ()
// GENERIC-NEXT: "pg_sched.launch"(%a, %t) <{kernel = @k0, invariant}> : (!pg.buffer<32xf32>, !pg.buffer<4xf32>) -> ()
// GENERIC-NEXT: "func.return"(%r, %b) : (!pg.buffer<4xf32>, !pg.buffer<4xi1>) -> ()
// GENERIC-NEXT: }) : () -> ()
func.func @main(%a: !pg.buffer<32xf32>) -> (!pg.buffer<4xf32>, !pg.buffer<4xi1>) {
  %t = pg_sched.alloc : !pg.buffer<4xf32>
  %b = pg_sched.alloc {tag = 1 : i64} : !pg.buffer<4xi1>
  %r = pg_sched.alloc : !pg.buffer<4xf32>
  pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
  pg_sched.launch @k1(%t, %b, %r) : !pg.buffer<4xf32>, !pg.buffer<4xi1>, !pg.buffer<4xf32>
  pg_sched.launch @k0(%a, %t) {invariant} : !pg.buffer<32xf32>, !pg.buffer<4xf32>
  func.return %r, %b : !pg.buffer<4xf32>, !pg.buffer<4xi1>
}

