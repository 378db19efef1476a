// RUN: opt-tool %s -p 'loop-split{kernel=k axis=0 factor=4 kind=upcast}' | filecheck %s
// RUN: opt-tool %s -p 'loop-split{kernel=k axis=0 factor=4 kind=upcast}' | %roundtrip | filecheck %s
// RUN: opt-tool %s -p 'loop-split{kernel=k axis=0 factor=2 kind=unroll},convert-loop-to-uop' | filecheck %s --check-prefix=UNROLL
// RUN: not opt-tool %s -p 'loop-split{kernel=k axis=3}' 2>&1 | filecheck %s --check-prefix=AXIS
// RUN: not opt-tool %s -p 'loop-split{kernel=nope}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not opt-tool %s -p 'loop-split{kernel=k factor=11}' 2>&1 | filecheck %s --check-prefix=BIG

// 10 iterations by 4: two blocks of 4 lanes, the index rebuilt as 2 + block * 4 + lane,
// then the 2 last iterations in a copy of the original range.
// CHECK-LABEL: pg_loop.kernel @k(
// CHECK-SAME:    pg.schedule = "split(0, 4, upcast)"
// CHECK-NEXT:    pg_loop.range %[[O:.*]] = 0 to 2 global {
// CHECK-NEXT:      pg_loop.range %[[L:.*]] = 0 to 4 upcast {
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[S:.*]] = pg_loop.index mul %[[O]], %[[C4]]
// CHECK-NEXT:        %[[P:.*]] = pg_loop.index add %[[S]], %[[L]]
// CHECK-NEXT:        %[[C2:.*]] = pg_loop.const 2
// CHECK-NEXT:        %[[I:.*]] = pg_loop.index add %[[P]], %[[C2]]
// CHECK-NEXT:        %{{.*}} = pg_loop.load %a[%[[I]]]
// CHECK-NEXT:        pg_loop.store %{{.*}}, %out[%[[I]]]
// CHECK:         pg_loop.range %[[R:.*]] = 10 to 12 global {
// CHECK-NEXT:      %{{.*}} = pg_loop.load %a[%[[R]]]
// CHECK-NEXT:      pg_loop.store %{{.*}}, %out[%[[R]]]

// An `unroll` range becomes straight-line code: the 5 blocks of 2 stay a loop, each
// holding two copies of the body (lanes 0 and 1); no range of 2 remains.
// UNROLL-LABEL: pg_uop.kernel @k(
// UNROLL:         pg_uop.range 0 to 5 global
// UNROLL-COUNT-2: pg_uop.store
// UNROLL-NOT:     pg_uop.range
// UNROLL:         pg_uop.end

// AXIS: loop-split: @k: split(3, 4, upcast): no axis 3 (the kernel has axes 0 to 0)
// NAME: loop-split: no pg_loop kernel @nope (kernels: @k)
// BIG: loop-split: @k: split(0, 11, upcast): factor 11 exceeds the range's 10 iterations
pg_loop.kernel @k(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
  pg_loop.range %i = 2 to 12 global {
    %x = pg_loop.load %a[%i] : !pg.buffer<12xf32> -> f32
    pg_loop.store %x, %out[%i] : f32, !pg.buffer<12xf32>
  }
}
