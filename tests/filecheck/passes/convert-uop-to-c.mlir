// convert-uop-to-c: each pg_uop op becomes one pg_c statement (checked in the IR), and
// module_to_c prints it as C (checked with -t c, prefix C). Covers every ALU kind on floats,
// integers and bools, the six comparisons, where, casts among f32 / i32 / i1 (float -> int
// saturates, NaN -> 0; -> bool is != 0), bool buffers as bytes (loaded != 0, stored as uint8_t),
// masked loads, `restrict` from the launches in @main, and a value used after its loop.
// A kernel that is one top-level global range may run in chunks on several threads: it
// gets `pg.outer` (trip count) / `pg.work` (ops) attributes, exports them as
// `<name>_pg_outer`, and its outer `for` runs over the trailing `start`/`end` arguments that
// every kernel takes (@escape, whose outer loop is a reduction, ignores them). A split kernel
// whose only loop is that outer loop is declared with GCC's "cheap" vectoriser cost model.
// RUN: opt-tool %s -p convert-uop-to-c | filecheck %s
// RUN: opt-tool %s -p convert-uop-to-c -t c | filecheck %s --check-prefix=C

// CHECK-LABEL: pg_c.func @float_alu(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) attributes {pg.outer = 4 : i64, pg.work = 64 : i64} {
// CHECK-NEXT:    %d = pg_c.const 2.5 : f64
// CHECK-NEXT:    %i = pg_c.for 0 to 4
// CHECK-NEXT:    %x = pg_c.load %a[%i] : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:    %y = pg_c.load %b[%i] : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:    %add = pg_c.binary "+" %x, %y : f32
// CHECK-NEXT:    %sub = pg_c.binary "-" %add, %y : f32
// CHECK-NEXT:    %mul = pg_c.binary "*" %sub, %y : f32
// CHECK-NEXT:    %div = pg_c.binary "/" %mul, %y : f32
// CHECK-NEXT:    %max = pg_c.binary "max" %div, %x : f32
// CHECK-NEXT:    %min = pg_c.binary "min" %max, %y : f32
// CHECK-NEXT:    %neg = pg_c.unary "-" %min : f32
// CHECK-NEXT:    %exp = pg_c.call "expf"(%neg) : f32
// CHECK-NEXT:    %log = pg_c.call "logf"(%exp) : f32
// CHECK-NEXT:    %sqrt = pg_c.call "sqrtf"(%log) : f32
// CHECK-NEXT:    %sin = pg_c.call "sinf"(%sqrt) : f32
// CHECK-NEXT:    %[[ONE:.*]] = pg_c.const 1.0 : f32
// CHECK-NEXT:    %recip = pg_c.binary "/" %[[ONE]], %sin : f32
// CHECK-NEXT:    %dexp = pg_c.call "exp"(%d) : f64
// CHECK-NEXT:    pg_c.store %recip, %out[%i] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    pg_c.end_for %i
// CHECK-NEXT:  }

// An f32 exp is the prelude's polynomial, not libm's expf (a call per vector lane).
// C:         static inline float pg_exp_float(float x) {
// C:           return y * u.f;
// C:         const int64_t float_alu_pg_outer[2] = {4, 64};
// C-NEXT:    const int64_t int_alu_pg_outer[2] = {4, 60};
// C-NOT:     escape_pg_outer
// C:         __attribute__((optimize("vect-cost-model=cheap"))) void float_alu(float* p0, float* p1, float* p2, int64_t start, int64_t end);
// C-LABEL: void float_alu(float* p0, float* p1, float* p2, int64_t start, int64_t end) {
// C-NEXT:    double {{v[0-9]+_d}} = 2.5;
// C-NEXT:    for (int64_t [[I:i[0-9]+_i]] = start; [[I]] < end; [[I]]++) {
// C-NEXT:      float [[X:v[0-9]+_x]] = p0[[[I]]];
// C-NEXT:      float [[Y:v[0-9]+_y]] = p1[[[I]]];
// C-NEXT:      float [[ADD:v[0-9]+_add]] = [[X]] + [[Y]];
// C-NEXT:      float [[SUB:v[0-9]+_sub]] = [[ADD]] - [[Y]];
// C-NEXT:      float [[MUL:v[0-9]+_mul]] = [[SUB]] * [[Y]];
// C-NEXT:      float [[DIV:v[0-9]+_div]] = [[MUL]] / [[Y]];
// C-NEXT:      float [[MAX:v[0-9]+_max]] = ([[DIV]] > [[X]] || [[DIV]] != [[DIV]]) ? [[DIV]] : [[X]];
// C-NEXT:      float [[MIN:v[0-9]+_min]] = ([[MAX]] < [[Y]] || [[MAX]] != [[MAX]]) ? [[MAX]] : [[Y]];
// C-NEXT:      float [[NEG:v[0-9]+_neg]] = -[[MIN]];
// C-NEXT:      float [[EXP:v[0-9]+_exp]] = pg_exp_float([[NEG]]);
// C-NEXT:      float [[LOG:v[0-9]+_log]] = logf([[EXP]]);
// C-NEXT:      float [[SQRT:v[0-9]+_sqrt]] = sqrtf([[LOG]]);
// C-NEXT:      float [[SIN:v[0-9]+_sin]] = sinf([[SQRT]]);
// C-NEXT:      float [[ONE:v[0-9]+]] = 1.0f;
// C-NEXT:      float [[RECIP:v[0-9]+_recip]] = [[ONE]] / [[SIN]];
// C-NEXT:      double {{v[0-9]+_dexp}} = exp({{v[0-9]+_d}});
// C-NEXT:      p2[[[I]]] = [[RECIP]];
// C-NEXT:    }
// C-NEXT:  }
pg_uop.kernel @float_alu(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
  %d = pg_uop.const 2.5 : f64
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  %y = pg_uop.load %b[%i] : !pg.buffer<4xf32> -> f32
  %add = pg_uop.binary add %x, %y : f32
  %sub = pg_uop.binary sub %add, %y : f32
  %mul = pg_uop.binary mul %sub, %y : f32
  %div = pg_uop.binary div %mul, %y : f32
  %max = pg_uop.binary max %div, %x : f32
  %min = pg_uop.binary min %max, %y : f32
  %neg = pg_uop.unary neg %min : f32
  %exp = pg_uop.unary exp %neg : f32
  %log = pg_uop.unary log %exp : f32
  %sqrt = pg_uop.unary sqrt %log : f32
  %sin = pg_uop.unary sin %sqrt : f32
  %recip = pg_uop.unary recip %sin : f32
  %dexp = pg_uop.unary exp %d : f64
  pg_uop.store %recip, %out[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// Signed 32-bit + - * and negation wrap (through uint32_t); / and % truncate, give 0 for a
// zero divisor, and do not trap on MIN / -1.
// CHECK-LABEL: pg_c.func @int_alu(
// CHECK:         %add = pg_c.binary "+" %x, %y : i32
// CHECK-NEXT:    %sub = pg_c.binary "-" %add, %y : i32
// CHECK-NEXT:    %mul = pg_c.binary "*" %sub, %y : i32
// CHECK-NEXT:    %div = pg_c.binary "/" %mul, %y : i32
// CHECK-NEXT:    %mod = pg_c.binary "%" %div, %y : i32
// CHECK-NEXT:    %and = pg_c.binary "&" %mod, %x : i32
// CHECK-NEXT:    %or = pg_c.binary "|" %and, %x : i32
// CHECK-NEXT:    %xor = pg_c.binary "^" %or, %y : i32
// CHECK-NEXT:    %max = pg_c.binary "max" %xor, %x : i32
// CHECK-NEXT:    %min = pg_c.binary "min" %max, %y : i32
// CHECK-NEXT:    %neg = pg_c.unary "-" %min : i32
// CHECK-NEXT:    %not = pg_c.unary "~" %neg : i32

// C-LABEL: void int_alu(int32_t* p0, int32_t* p1, int32_t* p2, int64_t start, int64_t end) {
// C:         int32_t [[ADD:v[0-9]+_add]] = (int32_t)((uint32_t)[[X:v[0-9]+_x]] + (uint32_t)[[Y:v[0-9]+_y]]);
// C-NEXT:    int32_t [[SUB:v[0-9]+_sub]] = (int32_t)((uint32_t)[[ADD]] - (uint32_t)[[Y]]);
// C-NEXT:    int32_t [[MUL:v[0-9]+_mul]] = (int32_t)((uint32_t)[[SUB]] * (uint32_t)[[Y]]);
// C-NEXT:    int32_t [[DIV:v[0-9]+_div]] = [[Y]] == 0 ? 0 : [[Y]] == -1 ? (int32_t)(0u - (uint32_t)[[MUL]]) : (int32_t)([[MUL]] / [[Y]]);
// C-NEXT:    int32_t [[MOD:v[0-9]+_mod]] = ([[Y]] == 0 || [[Y]] == -1) ? 0 : (int32_t)([[DIV]] % [[Y]]);
// C-NEXT:    int32_t [[AND:v[0-9]+_and]] = [[MOD]] & [[X]];
// C-NEXT:    int32_t [[OR:v[0-9]+_or]] = [[AND]] | [[X]];
// C-NEXT:    int32_t [[XOR:v[0-9]+_xor]] = [[OR]] ^ [[Y]];
// C-NEXT:    int32_t [[MAX:v[0-9]+_max]] = [[XOR]] > [[X]] ? [[XOR]] : [[X]];
// C-NEXT:    int32_t [[MIN:v[0-9]+_min]] = [[MAX]] < [[Y]] ? [[MAX]] : [[Y]];
// C-NEXT:    int32_t [[NEG:v[0-9]+_neg]] = (int32_t)(0u - (uint32_t)[[MIN]]);
// C-NEXT:    int32_t {{v[0-9]+_not}} = ~[[NEG]];
pg_uop.kernel @int_alu(%a: !pg.buffer<4xi32>, %b: !pg.buffer<4xi32>, %out: !pg.buffer<4xi32>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xi32> -> i32
  %y = pg_uop.load %b[%i] : !pg.buffer<4xi32> -> i32
  %add = pg_uop.binary add %x, %y : i32
  %sub = pg_uop.binary sub %add, %y : i32
  %mul = pg_uop.binary mul %sub, %y : i32
  %div = pg_uop.binary div %mul, %y : i32
  %mod = pg_uop.binary mod %div, %y : i32
  %and = pg_uop.binary and %mod, %x : i32
  %or = pg_uop.binary or %and, %x : i32
  %xor = pg_uop.binary xor %or, %y : i32
  %max = pg_uop.binary max %xor, %x : i32
  %min = pg_uop.binary min %max, %y : i32
  %neg = pg_uop.unary neg %min : i32
  %not = pg_uop.unary not %neg : i32
  pg_uop.store %not, %out[%i] : i32, !pg.buffer<4xi32>
  pg_uop.end %i
}

// Comparisons, bool ALU ops (max / min on bools are | / &, not is !), where; a bool buffer
// is a byte buffer.
// CHECK-LABEL: pg_c.func @bool_alu(
// CHECK:         %lt = pg_c.cmp "<" %x, %z : f32
// CHECK-NEXT:    %le = pg_c.cmp "<=" %x, %z : f32
// CHECK-NEXT:    %gt = pg_c.cmp ">" %x, %z : f32
// CHECK-NEXT:    %ge = pg_c.cmp ">=" %x, %z : f32
// CHECK-NEXT:    %eq = pg_c.cmp "==" %x, %z : f32
// CHECK-NEXT:    %ne = pg_c.cmp "!=" %x, %z : f32
// CHECK-NEXT:    %and = pg_c.binary "&" %p, %lt : i1
// CHECK-NEXT:    %or = pg_c.binary "|" %and, %le : i1
// CHECK-NEXT:    %xor = pg_c.binary "^" %or, %gt : i1
// CHECK-NEXT:    %max = pg_c.binary "|" %xor, %ge : i1
// CHECK-NEXT:    %min = pg_c.binary "&" %max, %eq : i1
// CHECK-NEXT:    %not = pg_c.unary "!" %min : i1
// CHECK-NEXT:    %r = pg_c.binary "&" %not, %ne : i1
// CHECK-NEXT:    pg_c.store %r, %out[%i] : i1, !pg.buffer<4xi1>
// CHECK-NEXT:    %w = pg_c.select %r, %x, %z : f32

// C-LABEL: void bool_alu(uint8_t* p0, float* p1, uint8_t* p2, float* p3, int64_t start, int64_t end) {
// C:         bool [[P:v[0-9]+_p]] = (p0[[[I:i[0-9]+_i]]] != 0);
// C:         bool {{v[0-9]+_lt}} = [[X:v[0-9]+_x]] < [[Z:v[0-9]+_z]];
// C-NEXT:    bool {{v[0-9]+_le}} = [[X]] <= [[Z]];
// C-NEXT:    bool {{v[0-9]+_gt}} = [[X]] > [[Z]];
// C-NEXT:    bool {{v[0-9]+_ge}} = [[X]] >= [[Z]];
// C-NEXT:    bool {{v[0-9]+_eq}} = [[X]] == [[Z]];
// C-NEXT:    bool {{v[0-9]+_ne}} = [[X]] != [[Z]];
// C:         bool {{v[0-9]+_not}} = !{{v[0-9]+_min}};
// C-NEXT:    bool [[R:v[0-9]+_r]] = {{v[0-9]+_not}} & {{v[0-9]+_ne}};
// C-NEXT:    p2[[[I]]] = (uint8_t)[[R]];
// C-NEXT:    float [[W:v[0-9]+_w]] = [[R]] ? [[X]] : [[Z]];
// C-NEXT:    p3[[[I]]] = [[W]];
pg_uop.kernel @bool_alu(%a: !pg.buffer<4xi1>, %b: !pg.buffer<4xf32>, %out: !pg.buffer<4xi1>, %o2: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %p = pg_uop.load %a[%i] : !pg.buffer<4xi1> -> i1
  %x = pg_uop.load %b[%i] : !pg.buffer<4xf32> -> f32
  %z = pg_uop.const 0.0 : f32
  %lt = pg_uop.cmp lt %x, %z : f32
  %le = pg_uop.cmp le %x, %z : f32
  %gt = pg_uop.cmp gt %x, %z : f32
  %ge = pg_uop.cmp ge %x, %z : f32
  %eq = pg_uop.cmp eq %x, %z : f32
  %ne = pg_uop.cmp ne %x, %z : f32
  %and = pg_uop.binary and %p, %lt : i1
  %or = pg_uop.binary or %and, %le : i1
  %xor = pg_uop.binary xor %or, %gt : i1
  %max = pg_uop.binary max %xor, %ge : i1
  %min = pg_uop.binary min %max, %eq : i1
  %not = pg_uop.unary not %min : i1
  %r = pg_uop.binary and %not, %ne : i1
  pg_uop.store %r, %out[%i] : i1, !pg.buffer<4xi1>
  %w = pg_uop.where %r, %x, %z : f32
  pg_uop.store %w, %o2[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// CHECK-LABEL: pg_c.func @casts(
// CHECK:         %f2i = pg_c.cast %f : f32 to i32
// CHECK:         %f2b = pg_c.cast %f : f32 to i1
// CHECK:         %i2f = pg_c.cast %n : i32 to f32
// CHECK:         %i2b = pg_c.cast %n : i32 to i1
// CHECK:         %b2f = pg_c.cast %p : i1 to f32
// CHECK:         %b2i = pg_c.cast %p : i1 to i32

// C-LABEL: void casts(
// C:         int32_t {{v[0-9]+_f2i}} = ([[F:v[0-9]+_f]] != [[F]] ? 0 : [[F]] >= 0x1p31f ? INT32_MAX : [[F]] < -0x1p31f ? INT32_MIN : (int32_t)[[F]]);
// C:         bool [[F2B:v[0-9]+_f2b]] = [[F]] != 0;
// C-NEXT:    p4[{{.*}}] = (uint8_t)[[F2B]];
// C:         float {{v[0-9]+_i2f}} = (float)[[N:v[0-9]+_n]];
// C:         bool {{v[0-9]+_i2b}} = [[N]] != 0;
// C:         float {{v[0-9]+_b2f}} = (float)[[P:v[0-9]+_p]];
// C:         int32_t {{v[0-9]+_b2i}} = (int32_t)[[P]];
pg_uop.kernel @casts(%a: !pg.buffer<4xf32>, %b: !pg.buffer<4xi32>, %c: !pg.buffer<4xi1>,
                     %o1: !pg.buffer<4xi32>, %o2: !pg.buffer<4xi1>, %o3: !pg.buffer<4xf32>,
                     %o4: !pg.buffer<4xi1>, %o5: !pg.buffer<4xf32>, %o6: !pg.buffer<4xi32>) {
  %i = pg_uop.range 0 to 4 global
  %f = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  %n = pg_uop.load %b[%i] : !pg.buffer<4xi32> -> i32
  %p = pg_uop.load %c[%i] : !pg.buffer<4xi1> -> i1
  %f2i = pg_uop.cast %f : f32 to i32
  pg_uop.store %f2i, %o1[%i] : i32, !pg.buffer<4xi32>
  %f2b = pg_uop.cast %f : f32 to i1
  pg_uop.store %f2b, %o2[%i] : i1, !pg.buffer<4xi1>
  %i2f = pg_uop.cast %n : i32 to f32
  pg_uop.store %i2f, %o3[%i] : f32, !pg.buffer<4xf32>
  %i2b = pg_uop.cast %n : i32 to i1
  pg_uop.store %i2b, %o4[%i] : i1, !pg.buffer<4xi1>
  %b2f = pg_uop.cast %p : i1 to f32
  pg_uop.store %b2f, %o5[%i] : f32, !pg.buffer<4xf32>
  %b2i = pg_uop.cast %p : i1 to i32
  pg_uop.store %b2i, %o6[%i] : i32, !pg.buffer<4xi32>
  pg_uop.end %i
}

// Masked loads keep mask and other value; a masked bool load compares the byte with 0 only
// where the mask holds. Every launch of @masked passes distinct buffers: restrict.
// CHECK-LABEL: pg_c.func @masked(%a: !pg.buffer<4xf32>, %c: !pg.buffer<4xi1>, %out: !pg.buffer<6xf32>, %o2: !pg.buffer<6xi1>) restrict attributes {pg.outer = 6 : i64, pg.work = 36 : i64} {
// CHECK-NEXT:    %c2 = pg_c.const 2 : index
// CHECK-NEXT:    %i = pg_c.for 0 to 6
// CHECK-NEXT:    %src = pg_c.binary "-" %i, %c2 : index
// CHECK-NEXT:    %m = pg_c.cmp ">=" %i, %c2 : index
// CHECK-NEXT:    %v = pg_c.load %a[%src] if %m else -1.5 : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:    pg_c.store %v, %out[%i] : f32, !pg.buffer<6xf32>
// CHECK-NEXT:    %p = pg_c.load %c[%src] if %m else 1 : !pg.buffer<4xi1> -> i1
// CHECK-NEXT:    pg_c.store %p, %o2[%i] : i1, !pg.buffer<6xi1>
// CHECK-NEXT:    pg_c.end_for %i
// CHECK-NEXT:  }

// C-LABEL: void masked(float* restrict p0, uint8_t* restrict p1, float* restrict p2, uint8_t* restrict p3, int64_t start, int64_t end) {
// C:         float [[V:v[0-9]+_v]] = [[M:v[0-9]+_m]] ? p0[[[SRC:v[0-9]+_src]]] : -1.5f;
// C:         bool [[P:v[0-9]+_p]] = [[M]] ? (p1[[[SRC]]] != 0) : true;
// C-NEXT:    p3[{{.*}}] = (uint8_t)[[P]];
pg_uop.kernel @masked(%a: !pg.buffer<4xf32>, %c: !pg.buffer<4xi1>, %out: !pg.buffer<6xf32>, %o2: !pg.buffer<6xi1>) {
  %c2 = pg_uop.const 2 : index
  %i = pg_uop.range 0 to 6 global
  %src = pg_uop.binary sub %i, %c2 : index
  %m = pg_uop.cmp ge %i, %c2 : index
  %v = pg_uop.load %a[%src] if %m else -1.5 : !pg.buffer<4xf32> -> f32
  pg_uop.store %v, %out[%i] : f32, !pg.buffer<6xf32>
  %p = pg_uop.load %c[%src] if %m else 1 : !pg.buffer<4xi1> -> i1
  pg_uop.store %p, %o2[%i] : i1, !pg.buffer<6xi1>
  pg_uop.end %i
}

// An accumulator is a C local; a value computed in a loop and used after it (as CSE leaves
// them) escapes through a local declared before the loop.
// CHECK-LABEL: pg_c.func @escape(
// CHECK:         %[[ACC:.*]] = pg_c.decl 0.0 : f32
// CHECK-NEXT:    %[[VAR:.*]] = pg_c.decl 0.0 : f32
// CHECK-NEXT:    %i = pg_c.for 0 to 4
// CHECK-NEXT:    %x = pg_c.load %a[%i] : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:    %e = pg_c.call "expf"(%x) : f32
// CHECK-NEXT:    pg_c.assign %[[VAR]], %e : f32
// CHECK-NEXT:    %[[OLD:.*]] = pg_c.read %[[ACC]] : f32
// CHECK-NEXT:    %[[NEW:.*]] = pg_c.binary "+" %[[OLD]], %x : f32
// CHECK-NEXT:    pg_c.assign %[[ACC]], %[[NEW]] : f32
// CHECK-NEXT:    pg_c.end_for %i
// CHECK-NEXT:    %[[E1:.*]] = pg_c.read %[[VAR]] : f32
// CHECK-NEXT:    pg_c.store %[[E1]], %out[%c0] : f32, !pg.buffer<2xf32>
// CHECK-NEXT:    %[[S:.*]] = pg_c.read %[[ACC]] : f32
// CHECK-NEXT:    pg_c.store %[[S]], %out[%c1] : f32, !pg.buffer<2xf32>

// C-LABEL: void escape(
// C:         float [[ACC:acc[0-9]+_acc]] = 0.0f;
// C-NEXT:    float [[VAR:acc[0-9]+]] = 0.0f;
// C-NEXT:    for (
// C:           [[VAR]] = [[E:v[0-9]+_e]];
// C:           [[ACC]] = [[NEW:v[0-9]+_new]];
// C-NEXT:    }
// C-NEXT:    float [[E1:v[0-9]+_e]] = [[VAR]];
// C-NEXT:    p1[{{.*}}] = [[E1]];
// C-NEXT:    float [[S:v[0-9]+_s]] = [[ACC]];
pg_uop.kernel @escape(%a: !pg.buffer<4xf32>, %out: !pg.buffer<2xf32>) {
  %c0 = pg_uop.const 0 : index
  %c1 = pg_uop.const 1 : index
  %acc = pg_uop.acc 0.0 : f32
  %i = pg_uop.range 0 to 4 reduce
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  %e = pg_uop.unary exp %x : f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %x : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %i
  pg_uop.store %e, %out[%c0] : f32, !pg.buffer<2xf32>
  %s = pg_uop.acc_load %acc : f32
  pg_uop.store %s, %out[%c1] : f32, !pg.buffer<2xf32>
}

// A global range that starts at 2 runs iterations [start, end) shifted by 2; a kernel with
// two top-level loops is never split (no attributes, its loops keep their constant bounds).
// CHECK-LABEL: pg_c.func @offset(%out: !pg.buffer<6xf32>) attributes {pg.outer = 4 : i64, pg.work = 8 : i64} {
// CHECK-LABEL: pg_c.func @two_loops(%out: !pg.buffer<6xf32>) {
// C-LABEL: void offset(float* p0, int64_t start, int64_t end) {
// C-NEXT:    float {{v[0-9]+_one}} = 1.0f;
// C-NEXT:    for (int64_t [[I:i[0-9]+_i]] = start + 2; [[I]] < end + 2; [[I]]++) {
// C-LABEL: void two_loops(float* p0, int64_t start, int64_t end) {
// C:         for (int64_t [[I:i[0-9]+_i]] = 0; [[I]] < 3; [[I]]++) {
// C:         for (int64_t [[J:i[0-9]+_j]] = 3; [[J]] < 6; [[J]]++) {
pg_uop.kernel @offset(%out: !pg.buffer<6xf32>) {
  %one = pg_uop.const 1.0 : f32
  %i = pg_uop.range 2 to 6 global
  %two = pg_uop.binary add %one, %one : f32
  pg_uop.store %two, %out[%i] : f32, !pg.buffer<6xf32>
  pg_uop.end %i
}

pg_uop.kernel @two_loops(%out: !pg.buffer<6xf32>) {
  %one = pg_uop.const 1.0 : f32
  %i = pg_uop.range 0 to 3 global
  pg_uop.store %one, %out[%i] : f32, !pg.buffer<6xf32>
  pg_uop.end %i
  %j = pg_uop.range 3 to 6 global
  pg_uop.store %one, %out[%j] : f32, !pg.buffer<6xf32>
  pg_uop.end %j
}

func.func @main(%a: !pg.buffer<4xf32>, %c: !pg.buffer<4xi1>) -> (!pg.buffer<6xf32>, !pg.buffer<6xi1>) {
  %out = pg_sched.alloc : !pg.buffer<6xf32>
  %o2 = pg_sched.alloc : !pg.buffer<6xi1>
  pg_sched.launch @masked(%a, %c, %out, %o2) : !pg.buffer<4xf32>, !pg.buffer<4xi1>, !pg.buffer<6xf32>, !pg.buffer<6xi1>
  func.return %out, %o2 : !pg.buffer<6xf32>, !pg.buffer<6xi1>
}
