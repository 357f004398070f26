"""One model instance process: the entry point (`serve`) and the main thread's loop
(`Instance`), which runs the model and, while idle, reads the socket (inbox.py).

`serve` is where the pieces meet: it creates the transport (Conn) and the Context, and
passes them explicitly: both to Instance, the Context to pb_utils' InferenceRequest and
Logger (their ways into the instance), BlsResponse decoding (bls.py) to the Conn.
"""

import asyncio
import os
import socket
import struct
import sys
import threading
import time

from . import forked
from . import protocol as P
from .autocomplete import auto_complete
from .bls import decode_bls_response
from .conn import Conn, die
from .context import Context
from .execute_frame import decode_execute, decode_requests
from .errors import TritonError, TritonModelException, format_exception
from .lane_server import LANE_CALL, LaneServer
from .log import Logger
from .messages import RELEASE_RESCHEDULE, InferenceRequest, InferenceResponse
from .metrics import MetricFamily
from .model_control import Models
from .modelfile import load_model_module
from .response_frames import FINAL, encode_responses, send_final_error, send_response

_ERR_NONE = b"\xff\xff\xff\xff\x00\x00\x00\x00"
# ExecuteDone without responses: n = 0, no block
_N0 = P.U32.pack(0) + P.U64.pack(P.NO_BLOCK)
_IDLE_FLUSH_S = 0.05


class _BatchError(Exception):
    """A batch-level failure whose text is used as is (Triton's C++ exceptions)."""


# ------------------------------------------------------------------ main thread

class Instance:
    def __init__(self, conn, ctx):
        self.c = conn  # the transport
        self.ctx = ctx  # the instance's state, shared with pb_utils' objects
        self.model = None
        self.execute = None
        self._loop = None

    # ---------------------------------------------------------------- helpers
    def loop(self):
        if self._loop is None:
            loop = asyncio.new_event_loop()
            t = threading.Thread(target=loop.run_forever, name="oxiserve-asyncio",
                                 daemon=True)
            t.start()
            self._loop = loop
        return self._loop

    def log_error(self, message):
        try:
            self.ctx.log(2, message, os.path.basename(self.ctx.model_file or "model.py"), 0)
        except Exception:
            pass

    @staticmethod
    def _error_parts(err_text, code=TritonError.INTERNAL):
        out = []
        P.p_error(out, code, err_text)
        return out

    # ---------------------------------------------------------------- frames
    def run(self):
        c = self.c
        handlers = {P.INIT: self.on_init, P.EXECUTE: self.on_execute,
                    P.FINALIZE: self.on_finalize, P.AUTO_COMPLETE: self.on_auto_complete,
                    LANE_CALL: self.on_lane_call}
        inbox = c.inbox
        mainq = inbox.mainq
        while True:
            if not mainq and not inbox.wait(lambda: mainq, _IDLE_FLUSH_S, spin=True):
                if c.lane_server is not None:
                    c.lane_server.report()
                c.flush_releases()
                continue
            kind, tag, body = mainq.popleft()
            try:
                handlers[kind](tag, body)
            except (P.ProtocolError, struct.error, UnicodeDecodeError) as e:
                sys.stderr.write("oxiserve python stub: malformed frame: %s\n" % e)
                die(P.MALFORMED_EXIT)
            del body

    def on_init(self, tag, body):
        c = self.c
        ctx = self.ctx
        r = P.Reader(body)
        args = {}
        for _ in range(r.u16()):
            k = r.str()
            args[k] = r.str()
        model_file = r.str()
        decoupled = r.bool()
        c.inbox.idle_spin = r.u32() * 1e-6
        lane = r.str()
        r.done()
        if lane:
            try:
                c.lane_server = LaneServer(c, lane)
            except OSError as e:  # calls keep going through the server
                sys.stderr.write("oxiserve python stub: no lane at %s: %s\n" % (lane, e))
        ctx.decoupled = decoupled
        ctx.model_name = args.get("model_name", "")
        ctx.instance_name = args.get("model_instance_name") or ctx.model_name
        ctx.model_file = model_file
        c.pool_key = "oxiserve:%s:out" % ctx.instance_name
        err = None
        try:
            module = load_model_module(model_file)
            self.model = module.TritonPythonModel()
            if hasattr(self.model, "initialize"):
                self.model.initialize(args)
        except BaseException as e:
            err = format_exception(e)
        if err is None:
            # Like Triton, a model without `execute` loads; each batch then fails.
            self.execute = getattr(self.model, "execute", None)
            ctx.bls_allowed = True
        c.send(P.frame(P.INIT_DONE, 0, self._error_parts(err) if err else [_ERR_NONE]))

    def on_execute(self, tag, body):
        c = self.c
        try:
            requests = decode_execute(c, body, self.ctx.model_name)
        except (ValueError, IndexError) as e:  # IndexError: cut short (Python decoder)
            raise P.ProtocolError(str(e))
        try:
            frame = self.run_batch(tag, requests)
        except BaseException as e:  # a bug of ours: answer the batch anyway
            frame = self.batch_error(tag, requests, "internal error in the Python stub: %r"
                                     % (e,))
        del requests  # the inputs' block is usually released here (goes with the frame)
        c.send(frame)

    def on_lane_call(self, tag, item):
        """A call that came in through the lane (lane.py): executed as a batch of one,
        answered on the lane, reported for the statistics."""
        lanes = self.c.lane_server
        peer, body = item
        try:
            requests = lanes.requests(tag, peer, body, decode_requests,
                                      self.ctx.model_name)
        except (P.ProtocolError, ValueError, IndexError, struct.error,
                UnicodeDecodeError) as e:
            sys.stderr.write("oxiserve python stub: malformed lane call: %s\n" % e)
            lanes.drop(peer)  # a caller that breaks the protocol; the others go on
            return
        rid = requests[0]._rid
        start = time.perf_counter_ns()
        try:
            frame = self.run_batch(tag, requests)
        except BaseException as e:  # a bug of ours: answer the call anyway
            frame = self.batch_error(tag, requests, "internal error in the Python stub: %r"
                                     % (e,))
        ns = time.perf_counter_ns() - start
        del requests
        lanes.executed(ns, lanes.answer(rid, frame))

    def run_batch(self, tag, requests):
        c = self.c
        try:
            if self.execute is None:
                raise _BatchError("Python model %s does not implement `execute` method."
                                  % self.ctx.model_file)
            ret = self.execute(requests)
            if asyncio.iscoroutine(ret):
                if self.ctx.decoupled:
                    fut = asyncio.run_coroutine_threadsafe(ret, self.loop())
                    fut.add_done_callback(
                        lambda f, reqs=requests: self._async_decoupled_done(f, reqs))
                    return P.frame(P.EXECUTE_DONE, tag, [_ERR_NONE, _N0])
                fut = asyncio.run_coroutine_threadsafe(ret, self.loop())
                fut.add_done_callback(lambda f: c.inbox.wake())
                c.inbox.wait(fut.done)  # reading: the coroutine may make BLS calls
                ret = fut.result()
            return self.returned(tag, requests, ret)
        except _BatchError as e:
            text = str(e)
        except BaseException as e:
            text = format_exception(e)
        return self.batch_error(tag, requests, text)

    def returned(self, tag, requests, ret):
        c = self.c
        ctx = self.ctx
        if ret is None:
            if ctx.decoupled:
                _send_reschedules(c, requests)
                return P.frame(P.EXECUTE_DONE, tag, [_ERR_NONE, _N0])
            return self.returned_none(tag, requests)
        if ctx.decoupled:
            raise _BatchError(
                "Python model '%s' is using the decoupled mode and the execute function "
                "must return None." % ctx.instance_name)
        if not isinstance(ret, list):
            raise _BatchError("Expected a list in the execute return, found type '%s'."
                              % type(ret))
        if len(ret) != len(requests):
            raise _BatchError(
                "Number of InferenceResponse objects do not match the number of "
                "InferenceRequest objects. InferenceRequest(s) size is:%d, and "
                "InferenceResponse(s) size is:%d\n" % (len(requests), len(ret)))
        any_none = False
        for req, resp in zip(requests, ret):
            if resp is None:
                any_none = True
                continue
            if req._release_flags == RELEASE_RESCHEDULE:
                raise _BatchError(
                    "Expected a None object in the execute function return list for "
                    "reschduled request, found type '%s'." % type(resp))
            if not isinstance(resp, InferenceResponse):
                raise _BatchError(
                    "Expected an 'InferenceResponse' object in the execute function return "
                    "list, found type '%s'." % type(resp))
            sender = req._sender
            if sender is not None:  # without one, nothing was sent: nothing to check
                try:
                    sender._update(resp, FINAL)
                except TritonModelException as e:
                    raise _BatchError(str(e))
        if any_none:
            # Some requests were answered through their sender (or rescheduled): send
            # the others as Send frames too, so ExecuteDone carries n = 0.
            for req, resp in zip(requests, ret):
                if resp is not None:
                    send_response(c, req._rid, req._outputs, resp, FINAL)
            _send_reschedules(c, requests)
            return P.frame(P.EXECUTE_DONE, tag, [_ERR_NONE, _N0])
        pairs = [(resp, req._outputs) for req, resp in zip(requests, ret)]
        if requests and requests[0]._rid >= P.LANE_RID:  # a lane's call (a batch of one)
            answer = c.lane_server.encoded(tag, pairs)
            if answer is not None:
                return answer
        out = [_ERR_NONE, P.U32.pack(len(ret))]
        encode_responses(c, pairs, out)
        return P.frame(P.EXECUTE_DONE, tag, out)

    def returned_none(self, tag, requests):
        """A default-mode model returned None: requests whose response sender the model took
        are its to answer (now or later, e.g. from a thread); the others fail at once
        (Triton 2.51 never answers them)."""
        text = ("Expected a list in the execute return, found type '%s'."
                % type(None))
        unused = [req for req in requests
                  if not _sender_obtained(req) and not _rescheduled(req)]
        if not unused:
            _send_reschedules(self.c, requests)
            return P.frame(P.EXECUTE_DONE, tag, [_ERR_NONE, _N0])
        if len(unused) == len(requests):
            return self.batch_error(tag, requests, text)
        message = batch_error_message(self.ctx.instance_name, text)
        self.log_error(message)
        self._fail_open_senders(unused, message)
        _send_reschedules(self.c, requests)
        return P.frame(P.EXECUTE_DONE, tag, [_ERR_NONE, _N0])

    def _fail_open_senders(self, requests, message):
        c = self.c
        for req in requests:
            try:
                s = req.get_response_sender()
                if s._close():
                    send_final_error(c, s._rid, message)
            except Exception:
                pass

    def batch_error(self, tag, requests, text):
        ctx = self.ctx
        message = batch_error_message(ctx.instance_name, text)
        self.log_error(message)
        if ctx.decoupled:
            self._fail_open_senders(requests, message)
        else:
            for req in requests:
                s = req.get_response_sender()
                s._closed = True
        return P.frame(P.EXECUTE_DONE, tag, self._error_parts(message) + [_N0])

    def _async_decoupled_done(self, fut, requests):
        ctx = self.ctx
        try:
            if fut.cancelled():
                text = "CancelledError: <EMPTY MESSAGE>"
            else:
                exc = fut.exception()
                if exc is None:
                    if fut.result() is None:
                        return
                    text = ("Python model '%s' is using the decoupled mode and the execute "
                            "function must return None." % ctx.instance_name)
                else:
                    text = format_exception(exc)
            message = batch_error_message(ctx.instance_name, text)
            self.log_error(message)
            self._fail_open_senders(requests, message)
        except Exception as e:
            sys.stderr.write("oxiserve python stub: async execute callback: %r\n" % (e,))

    def on_finalize(self, tag, body):
        c = self.c
        P.Reader(body).done()
        if c.lane_server is not None:
            c.lane_server.report()
        self.ctx.bls_allowed = False
        if self.model is not None and hasattr(self.model, "finalize"):
            try:
                self.model.finalize()
            except BaseException as e:
                self.log_error("Failed to finalize the model: " + format_exception(e))
        c.send(P.frame(P.FINALIZE_DONE, 0, [_ERR_NONE]))
        die(0)

    def on_auto_complete(self, tag, body):
        r = P.Reader(body)
        model_file = r.str()
        config_json = r.str()
        r.done()
        err, result = auto_complete(model_file, config_json)
        out = self._error_parts(err) if err else [_ERR_NONE]
        P.p_str(out, result)
        self.c.send(P.frame(P.AUTO_COMPLETE_DONE, 0, out))


def batch_error_message(instance_name, text):
    """The one place where batch-level error texts are formatted. Triton names the model
    instance (`model_instance_name`, e.g. 'add_sub_0_0'), not the model."""
    return ("Failed to process the request(s) for model '%s', message: %s"
            % (instance_name, text))


def _rescheduled(req):
    """Whether the model released the request with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE
    (iterative sequences: the scheduler gives it to the model again)."""
    return req._release_flags & RELEASE_RESCHEDULE != 0


def _send_reschedules(conn, requests):
    """Tells the server which requests of a batch that went well were rescheduled; before
    the batch's ExecuteDone. (After a failed batch, Triton releases every request.)"""
    rids = [req._rid for req in requests if _rescheduled(req)]
    if rids:
        conn.send(P.reschedule_frame(rids))


def _sender_obtained(req):
    """Whether the model took the request's response sender (it may answer through it
    later, e.g. from a thread)."""
    return req._sender is not None


def serve(sock_fd, arena_in_fd, arena_out_fd, layout, attach_fd=None):
    """layout: the spawn message (arena_size, pool_size, growth_size); attach_fd: the
    socket processes the model forks attach through (forked.py), if given."""
    try:
        conn = Conn.open(socket.socket(fileno=sock_fd), arena_in_fd, arena_out_fd, layout,
                         decode_bls_response)
    except (OSError, ValueError) as e:
        sys.stderr.write("oxiserve python stub: bad spawn descriptors: %s\n" % e)
        die(P.MALFORMED_EXIT)
    # print() output reaches the server's stdout line by line, as with Triton's stub.
    for f in (sys.stdout, sys.stderr):
        try:
            f.reconfigure(line_buffering=True)
        except Exception:
            pass
    ctx = Context(conn)
    if attach_fd is not None:
        forked.install(ctx, attach_fd, decode_bls_response)
    # pb_utils' ways in that start from no object of ours (Logger's static methods, the
    # requests a model builds for BLS, the senders of the server's requests) reach the
    # instance through this one Context.
    InferenceRequest._ctx = ctx
    Logger._ctx = ctx
    MetricFamily._ctx = ctx
    Models._ctx = ctx
    Instance(conn, ctx).run()
