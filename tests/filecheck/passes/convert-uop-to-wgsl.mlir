// convert-uop-to-wgsl: each GPU-form pg_uop op becomes one pg_wgsl statement. Covers the
// launch taken from the specials (grid from group_id, block from local_id), index -> i32
// (casts between them vanish), every float kind (max/min stay `max`/`min`: the printer makes
// them NaN-propagating), integer div/mod/not, the bool rewrites (xor -> !=, max/min -> | &,
// ordered comparisons through i32), values escaping a loop and an if through a `var`,
// workgroup memory and barriers, @main left alone, and the errors for what WGSL lacks.
// (The error cases at the end make opt-tool exit 1 after printing the other chunks.)
// RUN: not opt-tool %s --split-input-file -p convert-uop-to-wgsl | filecheck %s
// RUN: not opt-tool %s --split-input-file -p convert-uop-to-wgsl -t wgsl | filecheck %s --check-prefix=WGSL
// RUN: not opt-tool %s --split-input-file -p convert-uop-to-wgsl 2>&1 | filecheck %s --check-prefix=ERR

// CHECK-LABEL: pg_wgsl.fn @float_alu(%a: !pg.buffer<256xf32>, %b: !pg.buffer<256xf32>, %out: !pg.buffer<256xf32>) grid [4, 1, 1] block [64, 1, 1] {
// CHECK-NEXT:    %g = pg_wgsl.builtin workgroup_id 0
// CHECK-NEXT:    %l = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %c64 = pg_wgsl.const 64 : i32
// CHECK-NEXT:    %o = pg_wgsl.binary "*" %g, %c64 : i32
// CHECK-NEXT:    %i = pg_wgsl.binary "+" %o, %l : i32
// CHECK-NEXT:    %x = pg_wgsl.load %a[%i] : !pg.buffer<256xf32> -> f32
// CHECK-NEXT:    %ok = pg_wgsl.cmp "<" %i, %c64 : i32
// CHECK-NEXT:    %y = pg_wgsl.load %b[%i] if %ok else 1.0 : !pg.buffer<256xf32> -> f32
// CHECK-NEXT:    %add = pg_wgsl.binary "+" %x, %y : f32
// CHECK-NEXT:    %sub = pg_wgsl.binary "-" %add, %y : f32
// CHECK-NEXT:    %mul = pg_wgsl.binary "*" %sub, %y : f32
// CHECK-NEXT:    %div = pg_wgsl.binary "/" %mul, %y : f32
// CHECK-NEXT:    %max = pg_wgsl.binary "max" %div, %x : f32
// CHECK-NEXT:    %min = pg_wgsl.binary "min" %max, %y : f32
// CHECK-NEXT:    %neg = pg_wgsl.unary "-" %min : f32
// CHECK-NEXT:    %exp = pg_wgsl.call "exp"(%neg) : f32
// CHECK-NEXT:    %log = pg_wgsl.call "log"(%exp) : f32
// CHECK-NEXT:    %sqrt = pg_wgsl.call "sqrt"(%log) : f32
// CHECK-NEXT:    %sin = pg_wgsl.call "sin"(%sqrt) : f32
// CHECK-NEXT:    %exp2 = pg_wgsl.call "exp2"(%sin) : f32
// CHECK-NEXT:    %log2 = pg_wgsl.call "log2"(%exp2) : f32
// CHECK-NEXT:    %[[ONE:.*]] = pg_wgsl.const 1.0 : f32
// CHECK-NEXT:    %recip = pg_wgsl.binary "/" %[[ONE]], %log2 : f32
// CHECK-NEXT:    pg_wgsl.store %recip, %out[%i] : f32, !pg.buffer<256xf32>
// CHECK-NEXT:  }
// The helper functions the kernel calls come first (pg_max/pg_min propagate NaN, detected
// on the bits since WGSL lets compilers assume there is none).
// WGSL-LABEL: fn pg_isnan(x: f32) -> bool {
// WGSL-NEXT:    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
// WGSL-NEXT:  }
// WGSL-EMPTY:
// WGSL-NEXT:  fn pg_max(a: f32, b: f32) -> f32 {
// WGSL-NEXT:    return select(select(select(b, a, a > b), b, pg_isnan(b)), a, pg_isnan(a));
// WGSL-NEXT:  }
// WGSL-EMPTY:
// WGSL-NEXT:  fn pg_min(a: f32, b: f32) -> f32 {
// WGSL-NEXT:    return select(select(select(b, a, a < b), b, pg_isnan(b)), a, pg_isnan(a));
// WGSL-NEXT:  }
// Float division and sin go through helpers: Mesa folds x / 0.0 to 0 for a constant zero,
// and its sin is wrong for |x| >= 2^23 (pg_sin reduces the argument exactly first).
// WGSL-EMPTY:
// WGSL-NEXT:  fn pg_fdiv(a: f32, b: f32) -> f32 {
// WGSL:       fn pg_sin(x: f32) -> f32 {
// WGSL:       @group(0) @binding(0) var<storage, read_write> float_alu_p0: array<f32>;
// WGSL-NEXT:   @group(0) @binding(1) var<storage, read_write> float_alu_p1: array<f32>;
// WGSL-NEXT:   @group(0) @binding(2) var<storage, read_write> float_alu_p2: array<f32>;
// WGSL-EMPTY:
// WGSL-NEXT:   @compute @workgroup_size(64, 1, 1)
// WGSL-NEXT:   fn float_alu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
// WGSL-NEXT:     let [[G:v[0-9]+_g]] = i32(wid.x);
// WGSL-NEXT:     let [[L:v[0-9]+_l]] = i32(lid.x);
// WGSL:          let [[I:v[0-9]+_i]] = {{.*}} + [[L]];
// WGSL-NEXT:     let [[X:v[0-9]+_x]] = float_alu_p0[[[I]]];
// WGSL-NEXT:     let [[OK:v[0-9]+_ok]] = [[I]] < {{.*}};
// WGSL-NEXT:     let [[Y:v[0-9]+_y]] = select(1.0f, float_alu_p1[select(0i, [[I]], [[OK]])], [[OK]]);
// WGSL:          let [[DIV:v[0-9]+_div]] = pg_fdiv({{.*}}, [[Y]]);
// WGSL-NEXT:     let [[MAX:v[0-9]+_max]] = pg_max([[DIV]], [[X]]);
// WGSL-NEXT:     let [[MIN:v[0-9]+_min]] = pg_min([[MAX]], [[Y]]);
// WGSL-NEXT:     let [[NEG:v[0-9]+_neg]] = -[[MIN]];
// WGSL-NEXT:     let [[EXP:v[0-9]+_exp]] = exp([[NEG]]);
// WGSL:          let [[ONE:v[0-9]+]] = 1.0f;
// WGSL-NEXT:     let [[R:v[0-9]+_recip]] = pg_fdiv([[ONE]], {{v[0-9]+_log2}});
// WGSL-NEXT:     float_alu_p2[[[I]]] = [[R]];
// WGSL-NEXT:   }
pg_uop.kernel @float_alu(%a: !pg.buffer<256xf32>, %b: !pg.buffer<256xf32>, %out: !pg.buffer<256xf32>) {
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 0 size 64
  %c64 = pg_uop.const 64 : index
  %o = pg_uop.binary mul %g, %c64 : index
  %i = pg_uop.binary add %o, %l : index
  %x = pg_uop.load %a[%i] : !pg.buffer<256xf32> -> f32
  %ok = pg_uop.cmp lt %i, %c64 : index
  %y = pg_uop.load %b[%i] if %ok else 1.0 : !pg.buffer<256xf32> -> f32
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
  %exp2 = pg_uop.unary exp2 %sin : f32
  %log2 = pg_uop.unary log2 %exp2 : f32
  %recip = pg_uop.unary recip %log2 : f32
  pg_uop.store %recip, %out[%i] : f32, !pg.buffer<256xf32>
}

// -----
// Integers keep their operators (the printer guards / and %); bool xor is `!=`, bool
// max/min are | and &, `not` is ! on bools and ~ on integers, and bools are ordered as i32.
// The index <-> i32 casts disappear: index already is i32 here.
// CHECK-LABEL: pg_wgsl.fn @int_bool(%a: !pg.buffer<8xi32>, %m: !pg.buffer<8xi1>, %out: !pg.buffer<8xi1>) grid [1, 1, 1] block [8, 1, 1] {
// CHECK-NEXT:    %l = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %x = pg_wgsl.load %a[%l] : !pg.buffer<8xi32> -> i32
// CHECK-NEXT:    %q = pg_wgsl.binary "/" %x, %l : i32
// CHECK-NEXT:    %r = pg_wgsl.binary "%" %q, %l : i32
// CHECK-NEXT:    %n = pg_wgsl.unary "~" %r : i32
// CHECK-NEXT:    %p = pg_wgsl.load %m[%l] : !pg.buffer<8xi1> -> i1
// CHECK-NEXT:    %t = pg_wgsl.const {{-?1}} : i1
// CHECK-NEXT:    %xor = pg_wgsl.cmp "!=" %p, %t : i1
// CHECK-NEXT:    %mx = pg_wgsl.binary "|" %xor, %p : i1
// CHECK-NEXT:    %mn = pg_wgsl.binary "&" %mx, %t : i1
// CHECK-NEXT:    %not = pg_wgsl.unary "!" %mn : i1
// CHECK-NEXT:    %[[A:.*]] = pg_wgsl.cast %not : i1 to i32
// CHECK-NEXT:    %[[B:.*]] = pg_wgsl.cast %p : i1 to i32
// CHECK-NEXT:    %lt = pg_wgsl.cmp "<" %[[A]], %[[B]] : i32
// CHECK-NEXT:    %z = pg_wgsl.const 0 : i32
// CHECK-NEXT:    %gt = pg_wgsl.cmp ">" %n, %z : i32
// CHECK-NEXT:    %w = pg_wgsl.select %gt, %lt, %p : i1
// CHECK-NEXT:    %f = pg_wgsl.cast %x : i32 to f32
// CHECK-NEXT:    %fi = pg_wgsl.cast %f : f32 to i1
// CHECK-NEXT:    %both = pg_wgsl.binary "&" %w, %fi : i1
// CHECK-NEXT:    pg_wgsl.store %both, %out[%l] : i1, !pg.buffer<8xi1>
// CHECK-NEXT:  }
// Integer division by zero gives 0 and MIN / -1 gives MIN, as on the CPU.
// WGSL-LABEL: fn pg_div(a: i32, b: i32) -> i32 {
// WGSL-NEXT:    let q = a / select(b, 1i, b == 0i || b == -1i);
// WGSL-NEXT:    return select(select(q, -a, b == -1i), 0i, b == 0i);
// WGSL-NEXT:  }
// WGSL-EMPTY:
// WGSL-NEXT:  fn pg_mod(a: i32, b: i32) -> i32 {
// WGSL-NEXT:    return a % select(b, 1i, b == 0i || b == -1i);
// WGSL-NEXT:  }
// WGSL:        var<storage, read_write> int_bool_p0: array<i32>;
// WGSL-NEXT:   @group(0) @binding(1) var<storage, read_write> int_bool_p1: array<u32>;
// WGSL-NEXT:   @group(0) @binding(2) var<storage, read_write> int_bool_p2: array<u32>;
// WGSL:        fn int_bool(
// WGSL-NEXT:     let [[L:v[0-9]+_l]] = i32(lid.x);
// WGSL-NEXT:     let [[X:v[0-9]+_x]] = int_bool_p0[[[L]]];
// WGSL-NEXT:     let [[Q:v[0-9]+_q]] = pg_div([[X]], [[L]]);
// WGSL-NEXT:     let {{v[0-9]+_r}} = pg_mod([[Q]], [[L]]);
// WGSL-NEXT:     let {{v[0-9]+_n}} = ~{{v[0-9]+_r}};
// WGSL-NEXT:     let [[P:v[0-9]+_p]] = (int_bool_p1[[[L]]] != 0u);
// WGSL-NEXT:     let [[T:v[0-9]+_t]] = true;
// WGSL-NEXT:     let {{v[0-9]+_xor}} = [[P]] != [[T]];
// WGSL:          let [[NOT:v[0-9]+_not]] = !{{v[0-9]+_mn}};
// WGSL-NEXT:     let [[A:v[0-9]+]] = i32([[NOT]]);
// WGSL-NEXT:     let [[B:v[0-9]+]] = i32([[P]]);
// WGSL-NEXT:     let {{v[0-9]+_lt}} = [[A]] < [[B]];
// WGSL:          let [[F:v[0-9]+_f]] = f32([[X]]);
// WGSL-NEXT:     let {{v[0-9]+_fi}} = (bitcast<u32>([[F]]) & 0x7fffffffu) != 0u;
// WGSL-NEXT:     let [[BOTH:v[0-9]+_both]] = {{.*}} & {{.*}};
// WGSL-NEXT:     int_bool_p2[[[L]]] = select(0u, 1u, [[BOTH]]);
// WGSL-NEXT:   }
pg_uop.kernel @int_bool(%a: !pg.buffer<8xi32>, %m: !pg.buffer<8xi1>, %out: !pg.buffer<8xi1>) {
  %l = pg_uop.special local_id 0 size 8
  %x = pg_uop.load %a[%l] : !pg.buffer<8xi32> -> i32
  %li = pg_uop.cast %l : index to i32
  %q = pg_uop.binary div %x, %li : i32
  %r = pg_uop.binary mod %q, %li : i32
  %n = pg_uop.unary not %r : i32
  %p = pg_uop.load %m[%l] : !pg.buffer<8xi1> -> i1
  %t = pg_uop.const 1 : i1
  %xor = pg_uop.binary xor %p, %t : i1
  %mx = pg_uop.binary max %xor, %p : i1
  %mn = pg_uop.binary min %mx, %t : i1
  %not = pg_uop.unary not %mn : i1
  %lt = pg_uop.cmp lt %not, %p : i1
  %z = pg_uop.const 0 : i32
  %gt = pg_uop.cmp gt %n, %z : i32
  %w = pg_uop.where %gt, %lt, %p : i1
  %f = pg_uop.cast %x : i32 to f32
  %fi = pg_uop.cast %f : f32 to i1
  %both = pg_uop.binary and %w, %fi : i1
  %li2 = pg_uop.cast %li : i32 to index
  pg_uop.store %both, %out[%li2] : i1, !pg.buffer<8xi1>
}

// -----
// %o is computed in the loop and used after it, %half in the if and used after it: each
// gets a `var` declared before the loop or if, assigned where the value is computed and
// read back where it is used out of scope.
// CHECK-LABEL: pg_wgsl.fn @escape(%a: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) grid [1, 4, 1] block [1, 1, 1] {
// CHECK-NEXT:    %g = pg_wgsl.builtin workgroup_id 1
// CHECK-NEXT:    %acc = pg_wgsl.var 0.0 : f32
// CHECK-NEXT:    %o_var = pg_wgsl.var 0 : i32
// CHECK-NEXT:    %j = pg_wgsl.for 0 to 4
// CHECK-NEXT:    %c4 = pg_wgsl.const 4 : i32
// CHECK-NEXT:    %o = pg_wgsl.binary "*" %g, %c4 : i32
// CHECK-NEXT:    pg_wgsl.assign %o_var, %o : i32
// CHECK-NEXT:    %idx = pg_wgsl.binary "+" %o, %j : i32
// CHECK-NEXT:    %v = pg_wgsl.load %a[%idx] : !pg.buffer<16xf32> -> f32
// CHECK-NEXT:    %old = pg_wgsl.read %acc : f32
// CHECK-NEXT:    %new = pg_wgsl.binary "+" %old, %v : f32
// CHECK-NEXT:    pg_wgsl.assign %acc, %new : f32
// CHECK-NEXT:    pg_wgsl.end_for %j
// A float sum's final read turns -0.0 into +0.0 (Mesa folds the first 0.0 + x to x):
// CHECK-NEXT:    %[[READ:.*]] = pg_wgsl.read %acc : f32
// CHECK-NEXT:    %[[Z:.*]] = pg_wgsl.const 0.0 : f32
// CHECK-NEXT:    %[[ISZ:.*]] = pg_wgsl.cmp "==" %[[READ]], %[[Z]] : f32
// CHECK-NEXT:    %sum = pg_wgsl.select %[[ISZ]], %[[Z]], %[[READ]] : f32
// CHECK-NEXT:    %scaled = pg_wgsl.binary "*" %sum, %sum : f32
// CHECK-NEXT:    %zero = pg_wgsl.const 0.0 : f32
// CHECK-NEXT:    %pos = pg_wgsl.cmp ">" %scaled, %zero : f32
// CHECK-NEXT:    %half_var = pg_wgsl.var 0.0 : f32
// CHECK-NEXT:    pg_wgsl.if %pos
// CHECK-NEXT:    %h = pg_wgsl.const 0.5 : f32
// CHECK-NEXT:    %half = pg_wgsl.binary "*" %scaled, %h : f32
// CHECK-NEXT:    pg_wgsl.assign %half_var, %half : f32
// CHECK-NEXT:    pg_wgsl.end_if
// CHECK-NEXT:    %[[H2:half_.*]] = pg_wgsl.read %half_var : f32
// CHECK-NEXT:    %res = pg_wgsl.select %pos, %[[H2]], %zero : f32
// CHECK-NEXT:    %[[O2:o_.*]] = pg_wgsl.read %o_var : i32
// CHECK-NEXT:    pg_wgsl.store %res, %out[%[[O2]]] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:  }
// WGSL-LABEL: fn escape(
// WGSL-NEXT:     let [[G:v[0-9]+_g]] = i32(wid.y);
// WGSL-NEXT:     var [[ACC:acc[0-9]+_acc]]: f32 = 0.0f;
// WGSL-NEXT:     var [[OVAR:acc[0-9]+_o_var]]: i32 = 0i;
// WGSL-NEXT:     for (var [[J:i[0-9]+_j]]: i32 = 0; [[J]] < 4; [[J]]++) {
// WGSL-NEXT:       let [[C4:v[0-9]+_c4]] = 4i;
// WGSL-NEXT:       let [[O:v[0-9]+_o]] = [[G]] * [[C4]];
// WGSL-NEXT:       [[OVAR]] = [[O]];
// WGSL:          }
// WGSL:          var [[HVAR:acc[0-9]+_half_var]]: f32 = 0.0f;
// WGSL-NEXT:     if ({{v[0-9]+_pos}}) {
// WGSL-NEXT:       let [[H:v[0-9]+_h]] = 0.5f;
// WGSL-NEXT:       let [[HALF:v[0-9]+_half]] = {{v[0-9]+_scaled}} * [[H]];
// WGSL-NEXT:       [[HVAR]] = [[HALF]];
// WGSL-NEXT:     }
// WGSL-NEXT:     let [[HALF2:v[0-9]+_half]] = [[HVAR]];
// WGSL-NEXT:     let [[RES:v[0-9]+_res]] = select({{v[0-9]+_zero}}, [[HALF2]], {{v[0-9]+_pos}});
// WGSL-NEXT:     let [[O2:v[0-9]+_o]] = [[OVAR]];
// WGSL-NEXT:     escape_p1[[[O2]]] = [[RES]];
// WGSL-NEXT:   }
pg_uop.kernel @escape(%a: !pg.buffer<16xf32>, %out: !pg.buffer<4xf32>) {
  %g = pg_uop.special group_id 1 size 4
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 4 reduce
  %c4 = pg_uop.const 4 : index
  %o = pg_uop.binary mul %g, %c4 : index
  %idx = pg_uop.binary add %o, %j : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<16xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %sum = pg_uop.acc_load %acc : f32
  %scaled = pg_uop.binary mul %sum, %sum : f32
  %zero = pg_uop.const 0.0 : f32
  %pos = pg_uop.cmp gt %scaled, %zero : f32
  pg_uop.if %pos
  %h = pg_uop.const 0.5 : f32
  %half = pg_uop.binary mul %scaled, %h : f32
  pg_uop.endif
  %res = pg_uop.where %pos, %half, %zero : f32
  pg_uop.store %res, %out[%o] : f32, !pg.buffer<4xf32>
}

// -----
// Workgroup memory and a barrier; @main is kept as it is.
// CHECK-LABEL: pg_wgsl.fn @tree_sum(%a: !pg.buffer<64xf32>, %out: !pg.buffer<1xf32>) grid [1, 1, 1] block [64, 1, 1] {
// CHECK-NEXT:    %l = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %s = pg_wgsl.workgroup : !pg.buffer<64xf32>
// CHECK-NEXT:    %x = pg_wgsl.load %a[%l] : !pg.buffer<64xf32> -> f32
// CHECK-NEXT:    pg_wgsl.store %x, %s[%l] : f32, !pg.buffer<64xf32>
// CHECK-NEXT:    pg_wgsl.workgroup_barrier
// CHECK-NEXT:    %z = pg_wgsl.const 0 : i32
// CHECK-NEXT:    %first = pg_wgsl.cmp "==" %l, %z : i32
// CHECK-NEXT:    pg_wgsl.if %first
// CHECK-NEXT:    %acc = pg_wgsl.var 0.0 : f32
// CHECK-NEXT:    %k = pg_wgsl.for 0 to 64
// CHECK-NEXT:    %y = pg_wgsl.load %s[%k] : !pg.buffer<64xf32> -> f32
// CHECK-NEXT:    %old = pg_wgsl.read %acc : f32
// CHECK-NEXT:    %new = pg_wgsl.binary "+" %old, %y : f32
// CHECK-NEXT:    pg_wgsl.assign %acc, %new : f32
// CHECK-NEXT:    pg_wgsl.end_for %k
// CHECK-NEXT:    %[[READ2:.*]] = pg_wgsl.read %acc : f32
// CHECK-NEXT:    %[[Z2:.*]] = pg_wgsl.const 0.0 : f32
// CHECK-NEXT:    %[[ISZ2:.*]] = pg_wgsl.cmp "==" %[[READ2]], %[[Z2]] : f32
// CHECK-NEXT:    %r = pg_wgsl.select %[[ISZ2]], %[[Z2]], %[[READ2]] : f32
// CHECK-NEXT:    pg_wgsl.store %r, %out[%z] : f32, !pg.buffer<1xf32>
// CHECK-NEXT:    pg_wgsl.end_if
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main(%a: !pg.buffer<64xf32>) -> !pg.buffer<1xf32> {
// CHECK-NEXT:    %out = pg_sched.alloc : !pg.buffer<1xf32>
// CHECK-NEXT:    pg_sched.launch @tree_sum(%a, %out) : !pg.buffer<64xf32>, !pg.buffer<1xf32>
// CHECK-NEXT:    func.return %out : !pg.buffer<1xf32>
// CHECK-NEXT:  }
// WGSL-LABEL: var<storage, read_write> tree_sum_p1: array<f32>;
// WGSL-NEXT:   var<workgroup> [[S:tree_sum_s[0-9]+]]: array<f32, 64>;
// WGSL:        @compute @workgroup_size(64, 1, 1)
// WGSL-NEXT:   fn tree_sum(
// WGSL-NEXT:     let [[L:v[0-9]+_l]] = i32(lid.x);
// WGSL-NEXT:     let [[X:v[0-9]+_x]] = tree_sum_p0[[[L]]];
// WGSL-NEXT:     [[S]][[[L]]] = [[X]];
// WGSL-NEXT:     workgroupBarrier();
// WGSL:          if ({{v[0-9]+_first}}) {
// WGSL-NEXT:       var [[ACC:acc[0-9]+_acc]]: f32 = 0.0f;
// WGSL-NEXT:       for (var [[K:i[0-9]+_k]]: i32 = 0; [[K]] < 64; [[K]]++) {
// WGSL-NEXT:         let {{v[0-9]+_y}} = [[S]][[[K]]];
// WGSL:            }
// WGSL:            tree_sum_p1[{{v[0-9]+_z}}] = {{v[0-9]+_r}};
// WGSL-NEXT:     }
// WGSL-NEXT:   }
pg_uop.kernel @tree_sum(%a: !pg.buffer<64xf32>, %out: !pg.buffer<1xf32>) {
  %l = pg_uop.special local_id 0 size 64
  %s = pg_uop.shared : !pg.buffer<64xf32>
  %x = pg_uop.load %a[%l] : !pg.buffer<64xf32> -> f32
  pg_uop.store %x, %s[%l] : f32, !pg.buffer<64xf32>
  pg_uop.barrier
  %z = pg_uop.const 0 : index
  %first = pg_uop.cmp eq %l, %z : index
  pg_uop.if %first
  %acc = pg_uop.acc 0.0 : f32
  %k = pg_uop.range 0 to 64 reduce
  %y = pg_uop.load %s[%k] : !pg.buffer<64xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %y : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %k
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%z] : f32, !pg.buffer<1xf32>
  pg_uop.endif
}
func.func @main(%a: !pg.buffer<64xf32>) -> !pg.buffer<1xf32> {
  %out = pg_sched.alloc : !pg.buffer<1xf32>
  pg_sched.launch @tree_sum(%a, %out) : !pg.buffer<64xf32>, !pg.buffer<1xf32>
  func.return %out : !pg.buffer<1xf32>
}

// -----
// ERR: error: pass 'convert-uop-to-wgsl' failed: convert-uop-to-wgsl: @f64_buffer: buffer !pg.buffer<4xf64>: WGSL has no f64 (it has f32, i32 and bool, and emulates f16, i8, ui8 and i16)
pg_uop.kernel @f64_buffer(%a: !pg.buffer<4xf64>) {
  %l = pg_uop.special local_id 0 size 4
  %x = pg_uop.load %a[%l] : !pg.buffer<4xf64> -> f64
  pg_uop.store %x, %a[%l] : f64, !pg.buffer<4xf64>
}

// -----
// Emulated types (after uop-legalize{target=wgsl}: no arithmetic on them) keep their IR type
// in pg_wgsl; WGSL holds f16 in f32 and i8/ui8/i16 in i32, buffers too. A cast into one
// wraps or rounds (pg_f16); one that cannot leave the range (i8 -> i32, ui8 -> i16) is a copy.
// CHECK-LABEL: pg_wgsl.fn @emulated(
// CHECK:         %[[X:.*]] = pg_wgsl.load %{{.*}} : !pg.buffer<4xf16> -> f16
// CHECK-NEXT:    %[[W:.*]] = pg_wgsl.cast %[[X]] : f16 to f32
// CHECK-NEXT:    %[[Y:.*]] = pg_wgsl.binary "*" %[[W]], %[[W]] : f32
// CHECK-NEXT:    %[[R:.*]] = pg_wgsl.cast %[[Y]] : f32 to f16
// CHECK-NEXT:    %{{.*}} = pg_wgsl.cmp "<" %[[R]], %[[X]] : f16
// CHECK-NEXT:    %{{.*}} = pg_wgsl.const 0.0999755859375 : f16
// CHECK:         %{{.*}} = pg_wgsl.var 0 : i16
// WGSL-LABEL:  fn pg_f16(x: f32) -> f32 {
// WGSL:        @group(0) @binding(0) var<storage, read_write> emulated_p0: array<f32>;
// WGSL-NEXT:   @group(0) @binding(1) var<storage, read_write> emulated_p1: array<i32>;
// WGSL-NEXT:   @group(0) @binding(2) var<storage, read_write> emulated_p2: array<i32>;
// WGSL-NEXT:   @group(0) @binding(3) var<storage, read_write> emulated_p3: array<i32>;
// WGSL:          let v1_x = emulated_p0[v0_l];
// WGSL-NEXT:     let v2_w = v1_x;
// WGSL-NEXT:     let v3_y = v2_w * v2_w;
// WGSL-NEXT:     let v4_r = pg_f16(v3_y);
// WGSL-NEXT:     let v5_c = v4_r < v1_x && pg_ordered(v4_r, v1_x);
// WGSL-NEXT:     let v6_z = 0.0999755859f;
// WGSL:          let v10_k = v9_j + v9_j;
// WGSL-NEXT:     let v11_n = ((v10_k << 24u) >> 24u);
// WGSL-NEXT:     emulated_p1[v0_l] = v11_n;
// WGSL-NEXT:     let v12_o = (v11_n & 255i);
// WGSL-NEXT:     emulated_p2[v0_l] = v12_o;
// WGSL-NEXT:     let v13_p = ((pg_i32(v1_x) << 16u) >> 16u);
// WGSL-NEXT:     let v14_q = v12_o;
// WGSL-NEXT:     var acc15_acc: i32 = 0i;
pg_uop.kernel @emulated(%h: !pg.buffer<4xf16>, %b: !pg.buffer<4xi8>, %u: !pg.buffer<4xui8>,
                        %s: !pg.buffer<4xi16>) {
  %l = pg_uop.special local_id 0 size 4
  %x = pg_uop.load %h[%l] : !pg.buffer<4xf16> -> f16
  %w = pg_uop.cast %x : f16 to f32
  %y = pg_uop.binary mul %w, %w : f32
  %r = pg_uop.cast %y : f32 to f16
  %c = pg_uop.cmp lt %r, %x : f16
  %z = pg_uop.const 0.1 : f16
  %m = pg_uop.where %c, %r, %z : f16
  pg_uop.store %m, %h[%l] : f16, !pg.buffer<4xf16>
  %i = pg_uop.load %b[%l] : !pg.buffer<4xi8> -> i8
  %j = pg_uop.cast %i : i8 to i32
  %k = pg_uop.binary add %j, %j : i32
  %n = pg_uop.cast %k : i32 to i8
  pg_uop.store %n, %b[%l] : i8, !pg.buffer<4xi8>
  %o = pg_uop.cast %n : i8 to ui8
  pg_uop.store %o, %u[%l] : ui8, !pg.buffer<4xui8>
  %p = pg_uop.cast %x : f16 to i16
  %q = pg_uop.cast %o : ui8 to i16
  %acc = pg_uop.acc 0 : i16
  pg_uop.acc_store %acc, %p : i16
  %v = pg_uop.acc_load %acc : i16
  %e = pg_uop.cmp gt %v, %q : i16
  %f = pg_uop.where %e, %v, %q : i16
  pg_uop.store %f, %s[%l] : i16, !pg.buffer<4xi16>
}

// -----
// ERR: error: pass 'convert-uop-to-wgsl' failed: convert-uop-to-wgsl: @unlegalized: pg_uop.binary add on i8, which WGSL emulates: run uop-legalize{target=wgsl} first
pg_uop.kernel @unlegalized(%b: !pg.buffer<4xi8>) {
  %l = pg_uop.special local_id 0 size 4
  %i = pg_uop.load %b[%l] : !pg.buffer<4xi8> -> i8
  %k = pg_uop.binary add %i, %i : i8
  pg_uop.store %k, %b[%l] : i8, !pg.buffer<4xi8>
}

// -----
// ERR: error: pass 'convert-uop-to-wgsl' failed: convert-uop-to-wgsl: @global: pg_uop.special global_id is not supported by the WGSL target (uop-gpu-map gives group_id and local_id)
pg_uop.kernel @global(%a: !pg.buffer<4xf32>) {
  %l = pg_uop.special global_id 0 size 4
  %x = pg_uop.load %a[%l] : !pg.buffer<4xf32> -> f32
  pg_uop.store %x, %a[%l] : f32, !pg.buffer<4xf32>
}

// -----
// ERR: error: pass 'convert-uop-to-wgsl' failed: convert-uop-to-wgsl: @two_sizes: pg_uop.special local_id 0 has two sizes, 4 and 8
pg_uop.kernel @two_sizes(%a: !pg.buffer<8xf32>) {
  %l = pg_uop.special local_id 0 size 4
  %m = pg_uop.special local_id 0 size 8
  %x = pg_uop.load %a[%l] : !pg.buffer<8xf32> -> f32
  pg_uop.store %x, %a[%m] : f32, !pg.buffer<8xf32>
}
