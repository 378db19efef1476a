// RUN: opt-tool %s -p 'loop-interchange{kernel=k axis=0}' | filecheck %s
// RUN: opt-tool %s -p 'loop-interchange{axis=0}' | %roundtrip | filecheck %s
// RUN: not opt-tool %s -p 'loop-interchange{kernel=k axis=1}' 2>&1 | filecheck %s --check-prefix=LEAF
// RUN: not opt-tool %s -p 'loop-interchange{kernel=ordered axis=0}' 2>&1 | filecheck %s --check-prefix=ORDERED

// %i moves inside both ranges it holds (distributed over them); its pure op `%row` is
// copied into each, renamed to the new index.
// CHECK-LABEL: pg_loop.kernel @k(
// CHECK-SAME:    pg.schedule = "interchange(0)"
// CHECK-NEXT:    pg_loop.range %[[J:.*]] = 0 to 8 global {
// CHECK-NEXT:      pg_loop.range %[[I:.*]] = 0 to 4 global {
// CHECK-NEXT:        %[[C:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[ROW:.*]] = pg_loop.index mul %[[I]], %[[C]]
// CHECK-NEXT:        %[[AT:.*]] = pg_loop.index add %[[ROW]], %[[J]]
// CHECK:             pg_loop.store %{{.*}}, %out[%[[AT]]]
// CHECK:         pg_loop.range %[[K:.*]] = 0 to 2 loop {
// CHECK-NEXT:      pg_loop.range %[[I2:.*]] = 0 to 4 global {
// CHECK-NEXT:        %[[C2:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[ROW2:.*]] = pg_loop.index mul %[[I2]], %[[C2]]
// CHECK:             pg_loop.store %{{.*}}, %side[%[[I2]]]

// LEAF: loop-interchange: @k: interchange(1): it holds no range
// ORDERED: loop-interchange: @ordered: interchange(0): a loop range runs in order and stays where it is
pg_loop.kernel @k(%out: !pg.buffer<32xf32>, %side: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %c8 = pg_loop.const 8
    %row = pg_loop.index mul %i, %c8
    pg_loop.range %j = 0 to 8 global {
      %at = pg_loop.index add %row, %j
      %one = pg_uop.const 1.0 : f32
      pg_loop.store %one, %out[%at] : f32, !pg.buffer<32xf32>
    }
    pg_loop.range %k = 0 to 2 loop {
      %two = pg_uop.const 2.0 : f32
      pg_loop.store %two, %side[%i] : f32, !pg.buffer<4xf32>
    }
  }
}

pg_loop.kernel @ordered(%out: !pg.buffer<8xf32>) {
  pg_loop.range %i = 0 to 2 loop {
    pg_loop.range %j = 0 to 8 global {
      %one = pg_uop.const 1.0 : f32
      pg_loop.store %one, %out[%j] : f32, !pg.buffer<8xf32>
    }
  }
}
