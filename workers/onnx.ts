// A small builder for ONNX graphs, serialised with protobufjs against the subset of onnx.proto it
// needs (field numbers as in github.com/onnx/onnx/blob/main/onnx/onnx.proto). ONNX Runtime loads
// the bytes directly; nothing is written to disk.
import protobuf from 'protobufjs';

const schema = protobuf.parse(
  `
syntax = "proto3";
message AttributeProto { string name = 1; float f = 2; int64 i = 3; repeated int64 ints = 8; int32 type = 20; }
message TensorProto { repeated int64 dims = 1; int32 data_type = 2; string name = 8; bytes raw_data = 9; }
message Dimension { int64 dim_value = 1; string dim_param = 2; }
message TensorShapeProto { repeated Dimension dim = 1; }
message TensorType { int32 elem_type = 1; TensorShapeProto shape = 2; }
message TypeProto { TensorType tensor_type = 1; }
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message NodeProto { repeated string input = 1; repeated string output = 2; string name = 3; string op_type = 4; repeated AttributeProto attribute = 5; }
message GraphProto { repeated NodeProto node = 1; string name = 2; repeated TensorProto initializer = 5; repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12; }
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message ModelProto { int64 ir_version = 1; string producer_name = 2; GraphProto graph = 7; repeated OperatorSetIdProto opset_import = 8; }
`,
  { keepCase: true },
).root.lookupType('ModelProto');

/** TensorProto.DataType values. */
export const FLOAT = 1;
export const INT32 = 6;
const INT64 = 7;

/** AttributeProto.AttributeType values. */
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

type Attributes = Record<string, number | readonly number[] | { float: number }>;
type Dim = number | string;

interface Node {
  op_type: string;
  input: string[];
  output: string[];
  name: string;
  attribute: object[];
}

/** An ONNX graph under construction: named constants, nodes in topological order, typed inputs and outputs. */
export class OnnxGraph {
  private readonly nodes: Node[] = [];
  private readonly initializers: object[] = [];
  private readonly inputs: object[] = [];
  private readonly outputs: object[] = [];
  private count = 0;

  /** A graph input: `dims` of numbers are fixed, of strings symbolic (the same name, the same size). */
  input(name: string, elemType: number, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  output(value: string, name: string, elemType: number, dims: readonly Dim[]): void {
    this.nodes.push({ op_type: 'Identity', input: [value], output: [name], name, attribute: [] });
    this.outputs.push(valueInfo(name, elemType, dims));
  }

  /** A constant float tensor. */
  floats(name: string, dims: readonly number[], data: Float32Array): string {
    return this.constant(name, dims, FLOAT, data);
  }

  /** A constant int64 tensor (shapes, axes). */
  ints(name: string, values: readonly number[]): string {
    return this.constant(name, [values.length], INT64, BigInt64Array.from(values, BigInt));
  }

  /** A constant int32 tensor (to compare with int32 inputs). */
  int32s(name: string, values: readonly number[]): string {
    return this.constant(name, [values.length], INT32, Int32Array.from(values));
  }

  /** One node with one output; integer attributes as numbers, float ones as `{ float }`. */
  op(opType: string, inputs: readonly string[], attributes: Attributes = {}): string {
    return this.ops(opType, inputs, 1, attributes)[0]!;
  }

  ops(opType: string, inputs: readonly string[], outputs: number, attributes: Attributes = {}): string[] {
    const output = Array.from({ length: outputs }, () => `v${this.count++}`);
    const attribute = Object.entries(attributes).map(([name, value]) =>
      typeof value === 'number'
        ? { name, i: value, type: ATTRIBUTE_INT }
        : Array.isArray(value)
          ? { name, ints: value, type: ATTRIBUTE_INTS }
          : { name, f: (value as { float: number }).float, type: ATTRIBUTE_FLOAT },
    );
    this.nodes.push({ op_type: opType, input: [...inputs], output, name: `${opType}_${this.count}`, attribute });
    return output;
  }

  /** The serialised ModelProto (IR 8, default domain at `opset`). */
  encode(name: string, opset: number): Uint8Array {
    const model = {
      ir_version: 8,
      producer_name: 'lattice',
      opset_import: [{ domain: '', version: opset }],
      graph: { name, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    };
    return schema.encode(schema.fromObject(model)).finish();
  }

  private constant(name: string, dims: readonly number[], dataType: number, data: ArrayBufferView): string {
    this.initializers.push({ name, dims, data_type: dataType, raw_data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return name;
  }
}

function valueInfo(name: string, elemType: number, dims: readonly Dim[]): object {
  const dim = dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d }));
  return { name, type: { tensor_type: { elem_type: elemType, shape: { dim } } } };
}
