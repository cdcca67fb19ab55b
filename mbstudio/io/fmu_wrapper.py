"""The FMI 2.0 wrapper of an exported mechanism, as C source (io/fmu_export.py fills fmu_model.h for each model).

Written for MB Studio from the FMI 2.0 standard's function list; the few FMI types it needs are declared here so
the FMU builds with nothing but the C library. One instance holds the state y = (q, q̇_ind) of the compiled
engine's state equation, the inputs (generalized forces added on their coordinates), the outputs, and the
start values of the independent coordinates and their rates (the parameters). Model Exchange gives the state
derivatives to the importer's solver; Co-Simulation steps with classical Runge-Kutta (4th order) at an
internal step no longer than the parameter `internal_step`, closing the loops after each step.
"""

WRAPPER = r"""
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "fmu_model.h"

#if defined(_WIN32)
#define FMI_EXPORT __declspec(dllexport)
#else
#define FMI_EXPORT __attribute__((visibility("default")))
#endif

/* FMI 2.0 types, as the standard defines them */
typedef void* fmi2Component;
typedef void* fmi2ComponentEnvironment;
typedef void* fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char* fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void* (*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void*);
    void (*stepFinished)(fmi2ComponentEnvironment, fmi2Status);
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;
typedef struct {
    fmi2Boolean newDiscreteStatesNeeded;
    fmi2Boolean terminateSimulation;
    fmi2Boolean nominalsOfContinuousStatesChanged;
    fmi2Boolean valuesOfContinuousStatesChanged;
    fmi2Boolean nextEventTimeDefined;
    fmi2Real nextEventTime;
} fmi2EventInfo;

/* value references, in this order: inputs, outputs, states, derivatives, parameters, internal_step, constants */
#define VR_OUTPUTS (NU)
#define VR_STATES (VR_OUTPUTS + NY)
#define VR_DERIVATIVES (VR_STATES + NX)
#define VR_PARAMETERS (VR_DERIVATIVES + NX)
#define VR_STEP (VR_PARAMETERS + NP)
#define VR_CONSTANTS (VR_STEP + 1)
#define VR_END (VR_CONSTANTS + NC)

typedef struct {
    fmi2CallbackFunctions callbacks;
    char* name;
    int logging, initialised, fresh;
    double time, x[NX + 1], dx[NX + 1], u[NU + 1], y[NY + 1], q[NQ], tau[NQ], residual;
    double parameters[NP + 1], step;
    const casadi_real** arg;
    casadi_real** res;
    casadi_int* iw;
    casadi_real* w;
} Instance;

static void say(Instance* m, fmi2Status status, const char* text) {
    if (m->callbacks.logger && (m->logging || status > fmi2Warning))
        m->callbacks.logger(m->callbacks.componentEnvironment, m->name, status, "mbstudio", "%s", text);
}

/* the state equation and the outputs at (time, x, u): dx, the closed coordinates q, y */
static int evaluate(Instance* m, double t, const double* x, double* dx) {
    memset(m->tau, 0, sizeof(m->tau));
    for (int k = 0; k < NU; ++k) m->tau[INPUT_COORDINATE[k]] += m->u[k];
    m->arg[0] = &t; m->arg[1] = x; m->arg[2] = m->tau;
    m->res[0] = dx; m->res[1] = m->q; m->res[2] = &m->residual;
    if (MODEL_STATE_EQUATION(m->arg, m->res, m->iw, m->w, 0)) return 1;
    if (!(m->residual <= CLOSURE_LIMIT)) {
        say(m, fmi2Error, "the loops do not close at this state (a singular pose of the mechanism)");
        return 1;
    }
    for (int i = 0; i < NX; ++i)
        if (!isfinite(dx[i])) {
            say(m, fmi2Error, "the state derivative is not finite at this state");
            return 1;
        }
    if (NY > 0) {
        m->arg[0] = &t; m->arg[1] = m->q; m->arg[2] = x + NQ; m->arg[3] = m->tau;
        m->res[0] = m->y;
        if (MODEL_OUTPUTS(m->arg, m->res, m->iw, m->w, 0)) return 1;
    }
    m->fresh = 1;
    return 0;
}

static fmi2Status update(Instance* m) {
    if (m->fresh) return fmi2OK;
    return evaluate(m, m->time, m->x, m->dx) ? fmi2Error : fmi2OK;
}

static void start_state(Instance* m) {
    memcpy(m->x, INITIAL_STATE, sizeof(double) * NX);
    for (int k = 0; k < NP; ++k) m->x[PARAMETER_STATE[k]] = m->parameters[k];
    m->fresh = 0;
}

FMI_EXPORT const char* fmi2GetTypesPlatform(void) { return "default"; }
FMI_EXPORT const char* fmi2GetVersion(void) { return "2.0"; }

FMI_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String categories[]) {
    (void)n; (void)categories;
    ((Instance*)c)->logging = on;
    return fmi2OK;
}

FMI_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String location,
                                         const fmi2CallbackFunctions* callbacks, fmi2Boolean visible,
                                         fmi2Boolean logging) {
    (void)type; (void)location; (void)visible;
    if (!callbacks || !guid || strcmp(guid, MODEL_GUID) != 0) return NULL;
    Instance* m = (Instance*)calloc(1, sizeof(Instance));
    if (!m) return NULL;
    m->callbacks = *callbacks;
    m->logging = logging;
    m->name = (char*)malloc(strlen(name ? name : "") + 1);
    strcpy(m->name, name ? name : "");
    casadi_int sz_arg, sz_res, sz_iw, sz_w, a2, r2, i2, w2;
    MODEL_STATE_EQUATION_WORK(&sz_arg, &sz_res, &sz_iw, &sz_w);
    MODEL_OUTPUTS_WORK(&a2, &r2, &i2, &w2);
    sz_arg = a2 > sz_arg ? a2 : sz_arg; sz_res = r2 > sz_res ? r2 : sz_res;
    sz_iw = i2 > sz_iw ? i2 : sz_iw; sz_w = w2 > sz_w ? w2 : sz_w;
    m->arg = (const casadi_real**)calloc(sz_arg + 4, sizeof(casadi_real*));
    m->res = (casadi_real**)calloc(sz_res + 4, sizeof(casadi_real*));
    m->iw = (casadi_int*)calloc(sz_iw + 1, sizeof(casadi_int));
    m->w = (casadi_real*)calloc(sz_w + 1, sizeof(casadi_real));
    memcpy(m->parameters, PARAMETER_START, sizeof(double) * (NP + 1));
    m->step = INTERNAL_STEP;
    start_state(m);
    return m;
}

FMI_EXPORT void fmi2FreeInstance(fmi2Component c) {
    Instance* m = (Instance*)c;
    if (!m) return;
    free(m->arg); free(m->res); free(m->iw); free(m->w); free(m->name); free(m);
}

FMI_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolerance_defined, fmi2Real tolerance,
                                          fmi2Real start, fmi2Boolean stop_defined, fmi2Real stop) {
    (void)tolerance_defined; (void)tolerance; (void)stop_defined; (void)stop;
    ((Instance*)c)->time = start;
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance* m = (Instance*)c;
    start_state(m);
    if (update(m) != fmi2OK) return fmi2Error;
    memcpy(m->x, m->q, sizeof(double) * NQ); /* the start pose closed */
    m->fresh = 0;
    m->initialised = 1;
    return update(m);
}

FMI_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

FMI_EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    Instance* m = (Instance*)c;
    memcpy(m->parameters, PARAMETER_START, sizeof(double) * (NP + 1));
    memset(m->u, 0, sizeof(m->u));
    m->step = INTERNAL_STEP;
    m->time = 0;
    m->initialised = 0;
    start_state(m);
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Instance* m = (Instance*)c;
    if (n && update(m) != fmi2OK) return fmi2Error;
    for (size_t i = 0; i < n; ++i) {
        unsigned int r = vr[i];
        if (r < VR_OUTPUTS) value[i] = m->u[r];
        else if (r < VR_STATES) value[i] = m->y[r - VR_OUTPUTS];
        else if (r < VR_DERIVATIVES) value[i] = m->x[r - VR_STATES];
        else if (r < VR_PARAMETERS) value[i] = m->dx[r - VR_DERIVATIVES];
        else if (r < VR_STEP) value[i] = m->parameters[r - VR_PARAMETERS];
        else if (r == VR_STEP) value[i] = m->step;
        else if (r < VR_END) value[i] = CONSTANTS[r - VR_CONSTANTS];
        else return fmi2Error;
    }
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Instance* m = (Instance*)c;
    for (size_t i = 0; i < n; ++i) {
        unsigned int r = vr[i];
        if (r < VR_OUTPUTS) m->u[r] = value[i];
        else if (r >= VR_PARAMETERS && r < VR_STEP && !m->initialised) m->parameters[r - VR_PARAMETERS] = value[i];
        else if (r == VR_STEP && !m->initialised && value[i] > 0) m->step = value[i];
        else {
            say(m, fmi2Error, "this variable cannot be set now (an output, a state, a constant, or a parameter "
                              "after initialisation)");
            return fmi2Error;
        }
    }
    m->fresh = 0;
    return fmi2OK;
}

static fmi2Status none_of_these(fmi2Component c, size_t n) {
    if (n) say((Instance*)c, fmi2Error, "this FMU has Real variables only");
    return n ? fmi2Error : fmi2OK;
}

FMI_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}
FMI_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}
FMI_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}
FMI_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}
FMI_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}
FMI_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    (void)vr; (void)v; return none_of_these(c, n);
}

static fmi2Status unsupported(fmi2Component c, const char* what) {
    say((Instance*)c, fmi2Error, what);
    return fmi2Error;
}

FMI_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* s) {
    (void)s; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
    (void)s; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* s) {
    (void)s; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t* n) {
    (void)s; (void)n; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)s; (void)b; (void)n; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate* s) {
    (void)s; (void)b; (void)n; return unsupported(c, "no FMU state");
}
FMI_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                                   const fmi2ValueReference z[], size_t nz, const fmi2Real du[],
                                                   fmi2Real dz[]) {
    (void)u; (void)nu; (void)z; (void)nz; (void)du; (void)dz;
    return unsupported(c, "no directional derivatives");
}

/* ---------------------------------------------------------------------------------------- Model Exchange */
FMI_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo* info) {
    (void)c;
    memset(info, 0, sizeof(*info));
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_prior, fmi2Boolean* enter_event,
                                                  fmi2Boolean* terminate) {
    (void)c; (void)no_set_prior;
    *enter_event = 0;
    *terminate = 0;
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
    Instance* m = (Instance*)c;
    m->time = t;
    m->fresh = 0;
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    Instance* m = (Instance*)c;
    if (n != NX) return unsupported(c, "wrong number of states");
    memcpy(m->x, x, sizeof(double) * NX);
    m->fresh = 0;
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
    Instance* m = (Instance*)c;
    if (n != NX || update(m) != fmi2OK) return fmi2Error;
    memcpy(dx, m->dx, sizeof(double) * NX);
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
    (void)z; return n ? unsupported(c, "no event indicators") : fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    Instance* m = (Instance*)c;
    if (n != NX) return unsupported(c, "wrong number of states");
    memcpy(x, m->x, sizeof(double) * NX);
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    (void)c;
    for (size_t i = 0; i < n; ++i) x[i] = 1.0;
    return fmi2OK;
}

/* ---------------------------------------------------------------------------------------- Co-Simulation */
static int rk4(Instance* m, double t, double h) {
    double k[4][NX + 1], x[NX + 1];
    static const double at[4] = {0.0, 0.5, 0.5, 1.0};
    for (int s = 0; s < 4; ++s) {
        for (int i = 0; i < NX; ++i) x[i] = m->x[i] + (s ? at[s] * h * k[s - 1][i] : 0.0);
        if (evaluate(m, t + at[s] * h, x, k[s])) return 1;
    }
    for (int i = 0; i < NX; ++i) m->x[i] += h / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
    if (evaluate(m, t + h, m->x, m->dx)) return 1;
    memcpy(m->x, m->q, sizeof(double) * NQ); /* the loops closed after each step */
    m->fresh = 0;
    return 0;
}

FMI_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                  const fmi2Integer order[], const fmi2Real value[]) {
    (void)vr; (void)order; (void)value;
    return n ? unsupported(c, "inputs are held over a step (no input derivatives)") : fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                   const fmi2Integer order[], fmi2Real value[]) {
    (void)vr; (void)order; (void)value;
    return n ? unsupported(c, "no output derivatives") : fmi2OK;
}
FMI_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_set_prior) {
    Instance* m = (Instance*)c;
    (void)no_set_prior;
    if (h < 0) return unsupported(c, "a negative communication step");
    int steps = (int)ceil(h / m->step - 1e-9);
    if (steps < 1) steps = 1;
    for (int s = 0; s < steps; ++s)
        if (rk4(m, t + s * (h / steps), h / steps)) return fmi2Error;
    m->time = t + h;
    return update(m);
}
FMI_EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { return unsupported(c, "steps are not asynchronous"); }
FMI_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status* value) {
    (void)s; (void)value; return unsupported(c, "steps are not asynchronous");
}
FMI_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real* value) {
    if (s == fmi2LastSuccessfulTime) { *value = ((Instance*)c)->time; return fmi2OK; }
    return unsupported(c, "no such status");
}
FMI_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer* value) {
    (void)s; (void)value; return unsupported(c, "no such status");
}
FMI_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean* value) {
    (void)s; (void)value; return unsupported(c, "no such status");
}
FMI_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String* value) {
    (void)s; (void)value; return unsupported(c, "no such status");
}
"""
