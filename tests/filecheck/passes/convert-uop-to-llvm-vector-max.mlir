// RUN: opt-tool %s -p convert-uop-to-llvm | filecheck %s
// RUN: opt-tool %s -p convert-uop-to-llvm -t llvm-ir | filecheck %s --check-prefix=IR

// Float max/min on vectors call a helper per vector type, declared once before the kernels
// (xDSL's llvm.fcmp and llvm.select take scalars); the printed module defines each as the
// scalar rule on whole vectors (NaN wins; of equal zeros, the second), inlined. Scalars keep
// the compare and select in place.
// CHECK:       llvm.func @pg.fmax.v8f32(vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:  llvm.func @pg.fmin.v8f32(vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-LABEL: llvm.func @k(
// CHECK:         %m = llvm.call @pg.fmax.v8f32(%v, %b)
// CHECK:         %n = llvm.call @pg.fmin.v8f32(%m, %v)
// CHECK:         llvm.fcmp "ogt" %{{.*}} : f32
// CHECK:         llvm.select
// CHECK-LABEL: llvm.func @k2(
// CHECK:         llvm.call @pg.fmax.v8f32

// IR:      define internal <8 x float> @"pg.fmax.v8f32"(<8 x float> [[A:%.*]], <8 x float> [[B:%.*]]) alwaysinline
// IR:        [[GT:%.*]] = fcmp ogt <8 x float> [[A]], [[B]]
// IR-NEXT:   [[NAN:%.*]] = fcmp uno <8 x float> [[A]], [[A]]
// IR-NEXT:   [[PICK:%.*]] = or <8 x i1> [[GT]], [[NAN]]
// IR-NEXT:   [[R:%.*]] = select  <8 x i1> [[PICK]], <8 x float> [[A]], <8 x float> [[B]]
// IR-NEXT:   ret <8 x float> [[R]]
// IR:      define internal <8 x float> @"pg.fmin.v8f32"
// IR:        fcmp olt <8 x float>
// IR:      define void @"k"(
// IR:        call ccc <8 x float> @"pg.fmax.v8f32"
pg_uop.kernel @k(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<8xf32>
  %z = pg_uop.const 0.0 : f32
  %b = pg_uop.broadcast %z : f32 -> vector<8xf32>
  %m = pg_uop.binary max %v, %b : vector<8xf32>
  %n = pg_uop.binary min %m, %v : vector<8xf32>
  pg_uop.vstore %n, %a[%c0] : vector<8xf32>, !pg.buffer<8xf32>
  %x = pg_uop.load %a[%c0] : !pg.buffer<8xf32> -> f32
  %y = pg_uop.binary max %x, %z : f32
  pg_uop.store %y, %a[%c0] : f32, !pg.buffer<8xf32>
}
pg_uop.kernel @k2(%a: !pg.buffer<8xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.vload %a[%c0] : !pg.buffer<8xf32> -> vector<8xf32>
  %m = pg_uop.binary max %v, %v : vector<8xf32>
  pg_uop.vstore %m, %a[%c0] : vector<8xf32>, !pg.buffer<8xf32>
}
