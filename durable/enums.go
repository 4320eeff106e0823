package durable

// RunStatus is the lifecycle state of a run.
type RunStatus string

// Run statuses. Completed, failed and cancelled are terminal.
const (
	RunRunning   RunStatus = "running"
	RunWaiting   RunStatus = "waiting"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// RunStatuses lists every run status.
func RunStatuses() []RunStatus {
	return []RunStatus{RunRunning, RunWaiting, RunCompleted, RunFailed, RunCancelled}
}

// Terminal reports whether a run in this status never progresses again.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// Valid reports whether s is a known run status.
func (s RunStatus) Valid() bool {
	switch s {
	case RunRunning, RunWaiting, RunCompleted, RunFailed, RunCancelled:
		return true
	}
	return false
}

// WaitReason says what a waiting run waits for.
type WaitReason string

// Wait reasons.
const (
	WaitEvent       WaitReason = "event"
	WaitUntil       WaitReason = "until"
	WaitUser        WaitReason = "user"
	WaitJob         WaitReason = "job"
	WaitSubworkflow WaitReason = "subworkflow"
)

// WaitReasons lists every wait reason.
func WaitReasons() []WaitReason {
	return []WaitReason{WaitEvent, WaitUntil, WaitUser, WaitJob, WaitSubworkflow}
}

// Valid reports whether r is a known wait reason.
func (r WaitReason) Valid() bool {
	switch r {
	case WaitEvent, WaitUntil, WaitUser, WaitJob, WaitSubworkflow:
		return true
	}
	return false
}

// EffectType names a side effect a node may request.
type EffectType string

// Effect types (the 18 of the Python runtime).
const (
	EffectWaitEvent        EffectType = "wait_event"
	EffectWaitUntil        EffectType = "wait_until"
	EffectAskUser          EffectType = "ask_user"
	EffectAnswerUser       EffectType = "answer_user"
	EffectEmitEvent        EffectType = "emit_event"
	EffectLLMCall          EffectType = "llm_call"
	EffectModelResidency   EffectType = "model_residency"
	EffectToolCalls        EffectType = "tool_calls"
	EffectMemoryQuery      EffectType = "memory_query"
	EffectMemoryTag        EffectType = "memory_tag"
	EffectMemoryCompact    EffectType = "memory_compact"
	EffectMemoryNote       EffectType = "memory_note"
	EffectMemoryRehydrate  EffectType = "memory_rehydrate"
	EffectMemoryKGAssert   EffectType = "memory_kg_assert"
	EffectMemoryKGQuery    EffectType = "memory_kg_query"
	EffectMemoryKGResolve  EffectType = "memory_kg_resolve"
	EffectVarsQuery        EffectType = "vars_query"
	EffectStartSubworkflow EffectType = "start_subworkflow"

	// EffectResume is the pseudo effect type of resume ledger records; it
	// is never requested by a node.
	EffectResume EffectType = "resume"
)

// EffectTypes lists every effect type a node may request.
func EffectTypes() []EffectType {
	return []EffectType{
		EffectWaitEvent, EffectWaitUntil, EffectAskUser, EffectAnswerUser, EffectEmitEvent,
		EffectLLMCall, EffectModelResidency, EffectToolCalls,
		EffectMemoryQuery, EffectMemoryTag, EffectMemoryCompact, EffectMemoryNote, EffectMemoryRehydrate,
		EffectMemoryKGAssert, EffectMemoryKGQuery, EffectMemoryKGResolve,
		EffectVarsQuery, EffectStartSubworkflow,
	}
}

// StepStatus is the status of a ledger record.
type StepStatus string

// Step statuses. Cancelled marks an attempt interrupted by a cancel.
const (
	StepStarted   StepStatus = "started"
	StepCompleted StepStatus = "completed"
	StepWaiting   StepStatus = "waiting"
	StepFailed    StepStatus = "failed"
	StepCancelled StepStatus = "cancelled"
)

// StepStatuses lists every step status.
func StepStatuses() []StepStatus {
	return []StepStatus{StepStarted, StepCompleted, StepWaiting, StepFailed, StepCancelled}
}
