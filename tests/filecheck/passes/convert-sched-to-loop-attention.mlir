// convert-sched-to-loop: an attention kernel's loops. The scratch buffer (48 = 2 work items x
// a tile of 4 queries x 6 keys) gives 2 global work items, each taking 2 tiles in a loop.
// Per tile: the scores as a register tile (4 queries upcast x 2 lanes of keys, a reduce over
// E inside) stored to the tile's scratch rows; per row the max, exp(x - peak) in lanes, the
// sum, the division by it in lanes; then the output as a register tile (4 queries x 16
// lanes of Ev, a reduce over the keys inside).
// RUN: opt-tool %s -p convert-sched-to-loop | filecheck %s

// CHECK-LABEL: pg_loop.kernel @k1(
// CHECK:         pg_loop.range %w = 0 to 2 global {
// CHECK:           pg_loop.range %g = 0 to 2 loop {
// CHECK:             pg_loop.range %j_o = 0 to 3 loop {
// CHECK:               pg_loop.range %t = 0 to 4 upcast {
// CHECK-NEXT:            pg_loop.range %j_lane = 0 to 2 upcast {
// CHECK:                   pg_loop.reduce sum %e = 0 to 4 : f32 {
// CHECK:                     pg_loop.load %q[
// CHECK:                     pg_loop.load %k[
// CHECK:                   pg_uop.const 0.5 : f32
// CHECK:                   pg_loop.store %{{.*}}, %scratch[
// CHECK:             pg_loop.range %t_1 = 0 to 4 loop {
// CHECK:               %[[PEAK:.*]] = pg_loop.reduce max %j = 0 to 6 : f32 {
// CHECK:               %[[NONE:.*]] = pg_uop.cmp eq %[[PEAK]], %{{.*}} : f32
// CHECK:               %[[SHIFT:.*]] = pg_uop.where %[[NONE]], %{{.*}}, %[[PEAK]] : f32
// CHECK:               pg_loop.range %j_lane_1 = 0 to 2 upcast {
// CHECK:                 pg_uop.binary sub %{{.*}}, %[[SHIFT]] : f32
// CHECK-NEXT:            pg_uop.unary exp
// CHECK-NEXT:            pg_loop.store %{{.*}}, %scratch[
// CHECK:               %[[TOTAL:.*]] = pg_loop.reduce sum %j_1 = 0 to 6 : f32 {
// CHECK:               %[[EMPTY:.*]] = pg_uop.cmp eq %[[TOTAL]], %{{.*}} : f32
// CHECK:               %[[DIV:.*]] = pg_uop.where %[[EMPTY]], %{{.*}}, %[[TOTAL]] : f32
// CHECK:               pg_loop.range %j_lane_2 = 0 to 2 upcast {
// CHECK:                 pg_uop.binary div %{{.*}}, %[[DIV]] : f32
// CHECK:             pg_loop.range %t_2 = 0 to 4 upcast {
// CHECK-NEXT:          pg_loop.range %d_lane = 0 to 16 upcast {
// CHECK-NEXT:            %[[MIX:.*]] = pg_loop.reduce sum %j_2 = 0 to 6 : f32 {
// CHECK:                   pg_loop.load %scratch[
// CHECK:                   pg_loop.load %v[
// CHECK:                 pg_loop.store %[[MIX]], %out[
builtin.module {
  pg_sched.kernel @k1(%q: !pg.buffer<64xf32>, %k: !pg.buffer<48xf32>, %v: !pg.buffer<192xf32>, %scratch: !pg.buffer<48xf32>, %out: !pg.buffer<256xf32>) {
    %q_1 = pg_sched.load %q : !pg.buffer<64xf32> -> tensor<2x8x4xf32>
    %k_1 = pg_sched.load %k : !pg.buffer<48xf32> -> tensor<2x6x4xf32>
    %v_1 = pg_sched.load %v : !pg.buffer<192xf32> -> tensor<2x6x16xf32>
    %z = pg_tensor.const 0.0 : tensor<2x8x6xf32>
    %r = pg_tensor.attention %q_1, %k_1, %v_1, %z scale 0.5 : tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x6x16xf32>, tensor<2x8x6xf32> -> tensor<2x8x16xf32>
    pg_sched.store %r, %out : tensor<2x8x16xf32>, !pg.buffer<256xf32>
  }
}
