// RUN: opt-tool %s -p uop-contract | filecheck %s
// RUN: opt-tool %s -p uop-contract,convert-uop-to-llvm | filecheck %s --check-prefix=LLVM

// A sum of products' step, acc + a*b stored back into acc, becomes one fma (f32 scalars and
// vectors); a product read twice, a sum not stored back into its accumulator, f64 and an
// elementwise a*b + c stay as they are (torch rounds those twice too).
// CHECK-LABEL: pg_uop.kernel @dots(
// CHECK:         %old = pg_uop.acc_load %acc : f32
// CHECK-NEXT:    %{{.*}} = pg_uop.fma %x, %y, %old : f32
// CHECK-NEXT:    pg_uop.acc_store %acc, %{{.*}} : f32
// CHECK:         %vold = pg_uop.acc_load %vacc : vector<8xf32>
// CHECK-NEXT:    %{{.*}} = pg_uop.fma %v, %v, %vold : vector<8xf32>
// CHECK:         %twice = pg_uop.binary mul %x, %x : f32
// CHECK:         pg_uop.binary add %old2, %twice : f32
// CHECK:         %dp = pg_uop.binary mul %dx, %dx : f64
// CHECK:         pg_uop.binary add %dold, %dp : f64
// CHECK:         %last = pg_uop.binary add %fin, %p2 : f32
// CHECK:         %e = pg_uop.binary add %p3, %x : f32
// CHECK-NOT:     pg_uop.fma
// LLVM-LABEL: llvm.func @dots(
// LLVM:         llvm.intr.fma(%{{.*}}) : (f32, f32, f32) -> f32
// LLVM:         llvm.intr.fma(%{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
pg_uop.kernel @dots(%a: !pg.buffer<8xf32>, %d: !pg.buffer<8xf64>) {
  %c0 = pg_uop.const 0 : index
  %acc = pg_uop.acc 0.0 : f32
  %vacc = pg_uop.acc 0.0 : vector<8xf32>
  %acc2 = pg_uop.acc 0.0 : f32
  %dacc = pg_uop.acc 0.0 : f64
  %r = pg_uop.range 0 to 4 reduce
  %x = pg_uop.load %a[%r] : !pg.buffer<8xf32> -> f32
  %y = pg_uop.load %a[%c0] : !pg.buffer<8xf32> -> f32
  %p = pg_uop.binary mul %x, %y : f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %p : f32
  pg_uop.acc_store %acc, %new : f32
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<8xf32>
  %vp = pg_uop.binary mul %v, %v : vector<8xf32>
  %vold = pg_uop.acc_load %vacc : vector<8xf32>
  %vnew = pg_uop.binary add %vp, %vold : vector<8xf32>
  pg_uop.acc_store %vacc, %vnew : vector<8xf32>
  %twice = pg_uop.binary mul %x, %x : f32
  %old2 = pg_uop.acc_load %acc2 : f32
  %new2 = pg_uop.binary add %old2, %twice : f32
  pg_uop.acc_store %acc2, %new2 : f32
  pg_uop.store %twice, %a[%c0] : f32, !pg.buffer<8xf32>
  %dx = pg_uop.load %d[%r] : !pg.buffer<8xf64> -> f64
  %dp = pg_uop.binary mul %dx, %dx : f64
  %dold = pg_uop.acc_load %dacc : f64
  %dnew = pg_uop.binary add %dold, %dp : f64
  pg_uop.acc_store %dacc, %dnew : f64
  pg_uop.end %r
  %fin = pg_uop.acc_load %acc : f32
  %p2 = pg_uop.binary mul %y, %y : f32
  %last = pg_uop.binary add %fin, %p2 : f32
  pg_uop.store %last, %a[%c0] : f32, !pg.buffer<8xf32>
  %p3 = pg_uop.binary mul %y, %x : f32
  %e = pg_uop.binary add %p3, %x : f32
  pg_uop.store %e, %a[%c0] : f32, !pg.buffer<8xf32>
  %vfin = pg_uop.acc_load %vacc : vector<8xf32>
  pg_uop.vstore %vfin, %a[%c0] : vector<8xf32>, !pg.buffer<8xf32>
  %dfin = pg_uop.acc_load %dacc : f64
  pg_uop.store %dfin, %d[%c0] : f64, !pg.buffer<8xf64>
  %fin2 = pg_uop.acc_load %acc2 : f32
  pg_uop.store %fin2, %a[%c0] : f32, !pg.buffer<8xf32>
}
