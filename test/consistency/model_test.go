package consistency_test

import (
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestKVModel checks the model on small histories, so that a pass of the
// fault tests means something: a model that accepted everything would pass
// them all.
func TestKVModel(t *testing.T) {
	const unknown = 1 << 40 // returns after everything
	op := func(client int, call, ret int64, in kvInput, out kvOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	write := func(key int, v int64) kvInput { return kvInput{op: opWrite, key: key, value: v} }
	cas := func(key int, expect int32, v int64) kvInput {
		return kvInput{op: opCAS, key: key, value: v, version: expect}
	}
	read := kvInput{op: opRead}
	ok := func(version int32) kvOutput { return kvOutput{result: resOK, version: version} }
	saw := func(value int64, version int32) kvOutput {
		return kvOutput{result: resOK, value: value, version: version}
	}
	bad := kvOutput{result: resBadVersion}
	lost := kvOutput{result: resUnknown}
	applied := kvOutput{result: resApplied}

	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"write then read", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, read, saw(5, 1)),
		}, porcupine.Ok},
		{"stale read after an acknowledged write", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, read, saw(0, 0)),
		}, porcupine.Illegal},
		{"concurrent read may see either", []porcupine.Operation{
			op(0, 0, 30, write(0, 5), ok(1)),
			op(1, 10, 20, read, saw(0, 0)),
			op(2, 10, 20, read, saw(5, 1)),
		}, porcupine.Ok},
		{"read goes back in time", []porcupine.Operation{
			op(0, 0, 50, write(0, 5), ok(1)),
			op(1, 10, 20, read, saw(5, 1)),
			op(2, 30, 40, read, saw(0, 0)),
		}, porcupine.Illegal},
		{"a write's version is the next", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(2)),
		}, porcupine.Illegal},
		{"two writes cannot get the same version", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 0, 10, write(0, 6), ok(1)),
		}, porcupine.Illegal},
		{"compare-and-set on the current version", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, cas(0, 1, 6), ok(2)),
			op(1, 40, 50, read, saw(6, 2)),
		}, porcupine.Ok},
		{"compare-and-set on an old version succeeds", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, cas(0, 0, 6), ok(1)),
		}, porcupine.Illegal},
		{"compare-and-set on the current version refused", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, cas(0, 1, 6), bad),
		}, porcupine.Illegal},
		{"compare-and-set on an old version refused", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, cas(0, 0, 6), bad),
		}, porcupine.Ok},
		{"unknown write seen later", []porcupine.Operation{
			op(0, 0, unknown, write(0, 5), lost),
			op(1, 20, 30, read, saw(5, 1)),
		}, porcupine.Ok},
		{"unknown write never seen", []porcupine.Operation{
			op(0, 0, unknown, write(0, 5), lost),
			op(1, 20, 30, read, saw(0, 0)),
			op(1, 40, 50, write(0, 6), ok(1)),
		}, porcupine.Ok},
		{"unknown write seen before it was made", []porcupine.Operation{
			op(1, 0, 10, read, saw(5, 1)),
			op(0, 20, unknown, write(0, 5), lost),
		}, porcupine.Illegal},
		{"unknown write seen, then gone", []porcupine.Operation{
			op(0, 0, unknown, write(0, 5), lost),
			op(1, 20, 30, read, saw(5, 1)),
			op(1, 40, 50, read, saw(0, 0)),
		}, porcupine.Illegal},
		{"unknown compare-and-set on a version it cannot match", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, unknown, cas(0, 0, 6), lost),
			op(1, 40, 50, read, saw(6, 2)),
		}, porcupine.Illegal},
		{"applied unknown write", []porcupine.Operation{
			op(0, 0, unknown, write(0, 5), applied),
			op(1, 20, 30, read, saw(5, 1)),
		}, porcupine.Ok},
		{"applied unknown compare-and-set on a version it cannot match", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, unknown, cas(0, 0, 6), applied),
		}, porcupine.Illegal},
		{"keys are independent", []porcupine.Operation{
			op(0, 0, 10, write(0, 5), ok(1)),
			op(1, 20, 30, kvInput{op: opRead, key: 1}, saw(0, 0)),
		}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(kvModel.ToModel(), tc.history); got != (tc.want == porcupine.Ok) {
				t.Errorf("linearizable: %v, want %v", got, tc.want == porcupine.Ok)
			}
		})
	}
}

// TestResolveUnknown checks what resolveUnknown settles.
func TestResolveUnknown(t *testing.T) {
	const unknown = unknownReturn
	lost := kvOutput{result: resUnknown}
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		want []kvResult // results of the writes kept, in order
	}{
		{"value read: applied", []porcupine.Operation{
			{Call: 0, Return: unknown, Input: kvInput{op: opWrite, value: 7}, Output: lost},
			{Call: 10, Return: 20, Input: kvInput{op: opRead}, Output: kvOutput{value: 7, version: 1}},
		}, []kvResult{resApplied}},
		{"every version accounted for: left out", []porcupine.Operation{
			{Call: 0, Return: unknown, Input: kvInput{op: opWrite, value: 7}, Output: lost},
			{Call: 0, Return: 10, Input: kvInput{op: opWrite, value: 8}, Output: kvOutput{version: 1}},
			{Call: 10, Return: 20, Input: kvInput{op: opRead}, Output: kvOutput{value: 8, version: 1}},
		}, []kvResult{resOK}},
		{"a refused compare-and-set no read follows: kept", []porcupine.Operation{
			{Call: 0, Return: unknown, Input: kvInput{op: opWrite, value: 7}, Output: lost},
			{Call: 0, Return: 10, Input: kvInput{op: opRead}, Output: kvOutput{value: 0, version: 0}},
			{Call: 10, Return: 20, Input: kvInput{op: opCAS, version: 0, value: 8}, Output: kvOutput{result: resBadVersion}},
		}, []kvResult{resUnknown, resBadVersion}},
		{"a refused compare-and-set a read follows: left out", []porcupine.Operation{
			{Call: 0, Return: unknown, Input: kvInput{op: opWrite, value: 7}, Output: lost},
			{Call: 10, Return: 20, Input: kvInput{op: opCAS, version: 1, value: 8}, Output: kvOutput{result: resBadVersion}},
			{Call: 30, Return: 40, Input: kvInput{op: opRead}, Output: kvOutput{value: 0, version: 0}},
		}, []kvResult{resBadVersion}},
		{"a version nobody explains: kept", []porcupine.Operation{
			{Call: 0, Return: unknown, Input: kvInput{op: opWrite, value: 7}, Output: lost},
			{Call: 10, Return: 20, Input: kvInput{op: opWrite, value: 8}, Output: kvOutput{version: 2}},
		}, []kvResult{resUnknown, resOK}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []kvResult
			for _, op := range resolveUnknown(tc.ops) {
				if op.Input.(kvInput).op != opRead {
					got = append(got, op.Output.(kvOutput).result)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("writes kept with results %v, want %v", got, tc.want)
			}
		})
	}
}
