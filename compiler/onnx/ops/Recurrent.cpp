// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Recurrent.cpp - RNN, GRU and LSTM unrolled over the sequence -------===//
//
// The sequence length is static, so each recurrent node unrolls into one
// step per time step: the input projections of every step are one matmul
// up front, and each step multiplies the previous hidden state by the
// recurrence weights and applies the gates with kiln's elementwise ops
// (which fuse into a few kernels a step).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/NodeContext.h"
#include "compiler/onnx/Operators.h"

using namespace mlir;

namespace kiln {

namespace {

enum class Cell { Rnn, Gru, Lstm };

/// Builds one recurrent node's ops; every method returns null after an
/// error has been reported, and takes null operands through unchanged.
class Unroller {
public:
  Unroller(NodeContext &ctx, Cell cell) : ctx_(ctx), b_(ctx.builder()), cell_(cell) {}

  LogicalResult run();

private:
  int gates() const { return cell_ == Cell::Lstm ? 4 : cell_ == Cell::Gru ? 3 : 1; }

  Value slice(Value v, int64_t axis, int64_t start, int64_t end) {
    if (!v)
      return v;
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()), steps(type.getRank(), 1);
    starts[axis] = start;
    ends[axis] = end;
    return ctx_.make<SliceOp>({v}, {ctx_.named("starts", b_.getDenseI64ArrayAttr(starts)),
                                    ctx_.named("ends", b_.getDenseI64ArrayAttr(ends)),
                                    ctx_.named("steps", b_.getDenseI64ArrayAttr(steps))});
  }
  /// Direction `d` of a [directions, ...] input, without that dimension.
  Value direction(Value v, int64_t d) {
    if (!v)
      return v;
    auto type = cast<RankedTensorType>(v.getType());
    return ctx_.reshape(slice(v, 0, d, d + 1), type.getShape().drop_front());
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return v ? ctx_.make<TransposeOp>({v}, {ctx_.named("perm", b_.getDenseI64ArrayAttr(perm))}) : v;
  }
  template <typename OpT> Value binary(Value a, Value c) {
    return a && c ? ctx_.make<OpT>({a, c}) : Value();
  }
  Value add(Value a, Value c) { return binary<AddOp>(a, c); }
  Value mul(Value a, Value c) { return binary<MulOp>(a, c); }
  Value matmul(Value a, Value c) { return binary<MatMulOp>(a, c); }
  Value scalar(double value) { return ctx_.scalarConstant(element_, value); }

  /// Activation `index` of this direction (ONNX's `activations`, with its
  /// alpha and beta), applied to `x`.
  Value activate(Value x, size_t index);
  /// Gate pre-activations clipped to [-clip, clip] when `clip` is set.
  Value clipped(Value x) {
    if (!x || !clip_)
      return x;
    return ctx_.make<ClipOp>({x}, {ctx_.named("min", b_.getF64FloatAttr(-*clip_)),
                                   ctx_.named("max", b_.getF64FloatAttr(*clip_))});
  }

  NodeContext &ctx_;
  Builder &b_;
  Cell cell_;
  Type element_;
  int64_t hidden_ = 0;
  std::optional<double> clip_;
  SmallVector<std::string> activations_;
  SmallVector<float> alphas_, betas_;
  size_t activationBase_ = 0;
};

Value Unroller::activate(Value x, size_t index) {
  if (!x)
    return x;
  index += activationBase_;
  const std::string &name = activations_[index];
  float alpha = index < alphas_.size() ? alphas_[index] : 0.0f;
  float beta = index < betas_.size() ? betas_[index] : 0.0f;
  auto floatAttr = [&](StringRef attr, double value) {
    return ctx_.named(attr, b_.getF32FloatAttr(float(value)));
  };
  if (name == "sigmoid")
    return ctx_.make<SigmoidOp>({x});
  if (name == "tanh")
    return ctx_.make<TanhOp>({x});
  if (name == "relu")
    return ctx_.make<ReluOp>({x});
  if (name == "softsign")
    return ctx_.make<SoftsignOp>({x});
  if (name == "softplus")
    return ctx_.make<SoftplusOp>({x});
  bool given = index < alphas_.size();
  if (name == "leakyrelu")
    return ctx_.make<LeakyReluOp>({x}, {floatAttr("alpha", given ? alpha : 0.01)});
  if (name == "thresholdedrelu")
    return ctx_.make<ThresholdedReluOp>({x}, {floatAttr("alpha", given ? alpha : 1.0)});
  if (name == "elu")
    return ctx_.make<EluOp>({x}, {floatAttr("alpha", given ? alpha : 1.0)});
  if (name == "hardsigmoid")
    return ctx_.make<HardSigmoidOp>({x}, {floatAttr("alpha", given ? alpha : 0.2),
                                          floatAttr("beta", index < betas_.size() ? beta : 0.5)});
  if (name == "affine")
    return add(mul(x, scalar(alpha)), scalar(beta));
  if (name == "scaledtanh")
    return mul(ctx_.make<TanhOp>({mul(x, scalar(beta))}), scalar(alpha));
  ctx_.error() << "activation '" << name << "' is not supported";
  return nullptr;
}

LogicalResult Unroller::run() {
  if (failed(ctx_.requireInputs(3)) || failed(ctx_.requireFloat(0)))
    return failure();
  RankedTensorType xType = ctx_.inputType(0), wType = ctx_.inputType(1);
  element_ = xType.getElementType();
  bool batchFirst = ctx_.intAttr("layout", 0) != 0;
  if (xType.getRank() != 3 || wType.getRank() != 3)
    return ctx_.error() << "expected a 3-D input and weight, got " << xType << " and " << wType;
  int64_t steps = xType.getDimSize(batchFirst ? 1 : 0);
  int64_t batch = xType.getDimSize(batchFirst ? 0 : 1), inputSize = xType.getDimSize(2);
  hidden_ = ctx_.intAttr("hidden_size", wType.getDimSize(1) / gates());
  std::string way = ctx_.stringAttr("direction", "forward");
  int64_t directions = way == "bidirectional" ? 2 : 1;
  if (way != "forward" && way != "reverse" && way != "bidirectional")
    return ctx_.error() << "direction '" << way << "' is not forward, reverse or bidirectional";
  if (wType.getShape() != ArrayRef<int64_t>{directions, gates() * hidden_, inputSize} ||
      ctx_.inputType(2).getShape() != ArrayRef<int64_t>{directions, gates() * hidden_, hidden_})
    return ctx_.error() << "weights " << wType << " and " << ctx_.inputType(2) << " do not fit "
                        << directions << " direction(s), " << gates() << " gate(s) of " << hidden_
                        << " and inputs of " << inputSize;
  if (const onnx::AttributeProto *attr = ctx_.attribute("clip"))
    clip_ = attr->f();
  if (cell_ == Cell::Lstm && ctx_.intAttr("input_forget", 0) != 0)
    return ctx_.error() << "input_forget is not supported";
  if (ctx_.hasInput(4) && way != "forward")
    return ctx_.error() << "sequence_lens with direction '" << way << "' is not supported";

  // Activations: per direction, ONNX's defaults unless given.
  SmallVector<std::string> defaults = cell_ == Cell::Rnn ? SmallVector<std::string>{"tanh"}
                                      : cell_ == Cell::Gru
                                          ? SmallVector<std::string>{"sigmoid", "tanh"}
                                          : SmallVector<std::string>{"sigmoid", "tanh", "tanh"};
  size_t perDirection = defaults.size();
  if (const onnx::AttributeProto *attr = ctx_.attribute("activations")) {
    for (const std::string &name : attr->strings())
      activations_.push_back(StringRef(name).lower());
  } else {
    for (int64_t d = 0; d < directions; ++d)
      activations_.append(defaults.begin(), defaults.end());
  }
  if (activations_.size() != perDirection * directions)
    return ctx_.error() << "expected " << perDirection * directions << " activations, got "
                        << activations_.size();
  if (const onnx::AttributeProto *attr = ctx_.attribute("activation_alpha"))
    alphas_.assign(attr->floats().begin(), attr->floats().end());
  if (const onnx::AttributeProto *attr = ctx_.attribute("activation_beta"))
    betas_.assign(attr->floats().begin(), attr->floats().end());
  bool linearBeforeReset = ctx_.intAttr("linear_before_reset", 0) != 0;

  // Time-major [steps, batch, input].
  Value x = batchFirst ? transpose(ctx_.input(0), {1, 0, 2}) : ctx_.input(0);
  Value lengths;
  if (ctx_.hasInput(4)) {
    lengths =
        ctx_.make<CastOp>({ctx_.input(4)}, {ctx_.named("to", TypeAttr::get(b_.getI64Type()))});
    lengths = lengths ? ctx_.reshape(lengths, {batch, 1}) : lengths;
  }
  SmallVector<int64_t> stateShape = {batch, hidden_};
  SmallVector<SmallVector<Value>> outputs(steps); // [step][direction]
  SmallVector<Value> finalH, finalC;
  for (int64_t d = 0; d < directions; ++d) {
    activationBase_ = size_t(d) * perDirection;
    bool reverse = way == "reverse" || d == 1;
    // Input projections of every step at once: [steps * batch, gates * H].
    Value w = direction(ctx_.input(1), d), r = direction(ctx_.input(2), d);
    Value wT = transpose(w, {1, 0}), rT = transpose(r, {1, 0});
    Value projected = matmul(ctx_.reshape(x, {steps * batch, inputSize}), wT);
    Value rBias;
    if (ctx_.hasInput(3)) {
      Value bias = direction(ctx_.input(3), d);
      Value wBias = slice(bias, 0, 0, gates() * hidden_);
      rBias = slice(bias, 0, gates() * hidden_, 2 * gates() * hidden_);
      // With linear_before_reset, GRU's recurrence bias joins the
      // recurrence product (the hidden gate's is inside the reset product);
      // otherwise both biases add here.
      bool recurrenceBias = cell_ == Cell::Gru && linearBeforeReset;
      projected = add(projected, recurrenceBias ? wBias : add(wBias, rBias));
      if (!recurrenceBias)
        rBias = nullptr;
    }
    projected = projected ? ctx_.reshape(projected, {steps, batch, gates() * hidden_}) : projected;
    Value h =
        ctx_.hasInput(5)
            ? direction(ctx_.input(5), d)
            : ctx_.constant(DenseElementsAttr::get(RankedTensorType::get(stateShape, element_),
                                                   b_.getFloatAttr(element_, 0.0)));
    Value c = h;
    if (cell_ == Cell::Lstm)
      c = ctx_.hasInput(6) ? direction(ctx_.input(6), d) : h;
    Value peepholes =
        cell_ == Cell::Lstm && ctx_.hasInput(7) ? direction(ctx_.input(7), d) : Value();
    auto gate = [&](Value all, int64_t k) { return slice(all, 1, k * hidden_, (k + 1) * hidden_); };
    for (int64_t i = 0; i < steps; ++i) {
      int64_t t = reverse ? steps - 1 - i : i;
      Value input = projected
                        ? ctx_.reshape(slice(projected, 0, t, t + 1), {batch, gates() * hidden_})
                        : Value();
      Value recurrent = matmul(h, rT);
      if (rBias)
        recurrent = add(recurrent, rBias);
      Value next, nextC = c;
      if (cell_ == Cell::Rnn) {
        next = activate(clipped(add(input, recurrent)), 0);
      } else if (cell_ == Cell::Gru) {
        // Gates z, r, h.
        Value z = activate(clipped(add(gate(input, 0), gate(recurrent, 0))), 0);
        Value reset = activate(clipped(add(gate(input, 1), gate(recurrent, 1))), 0);
        Value candidate;
        if (linearBeforeReset) {
          candidate = add(gate(input, 2), mul(reset, gate(recurrent, 2)));
        } else {
          Value rh =
              matmul(mul(reset, h), transpose(slice(r, 0, 2 * hidden_, 3 * hidden_), {1, 0}));
          candidate = add(gate(input, 2), rh);
        }
        candidate = activate(clipped(candidate), 1);
        // (1 - z) * candidate + z * h = candidate + z * (h - candidate)
        next = add(candidate, mul(z, binary<SubOp>(h, candidate)));
      } else {
        // Gates i, o, f, c; peepholes i, o, f.
        Value all = add(input, recurrent);
        auto peep = [&](Value v, int64_t k, Value state) {
          return peepholes ? add(v, mul(slice(peepholes, 0, k * hidden_, (k + 1) * hidden_), state))
                           : v;
        };
        Value in = activate(clipped(peep(gate(all, 0), 0, c)), 0);
        Value forget = activate(clipped(peep(gate(all, 2), 2, c)), 0);
        Value cell = activate(clipped(gate(all, 3)), 1);
        nextC = add(mul(forget, c), mul(in, cell));
        Value out = activate(clipped(peep(gate(all, 1), 1, nextC)), 0);
        next = mul(out, activate(nextC, 2));
      }
      Value y = next;
      if (lengths && next) {
        // Past its length a sequence keeps its state and outputs zeros.
        Value live = ctx_.make<LessOp>({ctx_.scalarConstant(b_.getI64Type(), double(t)), lengths});
        y = live ? ctx_.make<WhereOp>({live, next, scalar(0.0)}) : Value();
        next = live ? ctx_.make<WhereOp>({live, next, h}) : Value();
        if (cell_ == Cell::Lstm && live)
          nextC = ctx_.make<WhereOp>({live, nextC, c});
      }
      if (!y || !next || !nextC)
        return failure();
      outputs[t].push_back(ctx_.reshape(y, {1, batch, hidden_}));
      h = next;
      c = nextC;
    }
    finalH.push_back(ctx_.reshape(h, {1, batch, hidden_}));
    finalC.push_back(ctx_.reshape(c, {1, batch, hidden_}));
  }

  auto concat = [&](ArrayRef<Value> values, int64_t axis) -> Value {
    if (llvm::is_contained(values, Value()))
      return nullptr;
    if (values.size() == 1)
      return values.front();
    return ctx_.make<ConcatOp>(values, {ctx_.named("axis", b_.getI64IntegerAttr(axis))});
  };
  // Y: [steps, directions, batch, H] (batch first: [batch, steps, ...]).
  if (ctx_.isOutputUsed(0)) {
    SmallVector<Value> perStep;
    for (auto &step : outputs) {
      Value both = concat(step, 0);
      perStep.push_back(both ? ctx_.reshape(both, {1, directions, batch, hidden_}) : both);
    }
    Value y = concat(perStep, 0);
    if (batchFirst)
      y = transpose(y, {2, 0, 1, 3});
    if (!y)
      return failure();
    ctx_.setOutput(0, y);
  }
  for (auto [index, states] : {std::pair(1, &finalH), std::pair(2, &finalC)}) {
    if (!ctx_.isOutputUsed(index))
      continue;
    Value state = concat(*states, 0);
    if (batchFirst)
      state = transpose(state, {1, 0, 2});
    if (!state)
      return failure();
    ctx_.setOutput(index, state);
  }
  return success();
}

} // namespace

void registerRecurrentOperators(OperatorTable &ops) {
  ops.onOp("GRU", 7, [](NodeContext &ctx) { return Unroller(ctx, Cell::Gru).run(); });
  ops.onOp("LSTM", 7, [](NodeContext &ctx) { return Unroller(ctx, Cell::Lstm).run(); });
  ops.onOp("RNN", 7, [](NodeContext &ctx) { return Unroller(ctx, Cell::Rnn).run(); });
}

} // namespace kiln
