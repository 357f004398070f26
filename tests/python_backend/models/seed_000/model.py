import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Your Python model must use the same class name. Every Python model
    that is created must have "TritonPythonModel" as the class name.
    """

    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        """ [optional] """
        return auto_complete_model_config

    def initialize(self, args):
        """ [optional] called only once when the model is being loaded """
        print('Initialized...', flush=True)

    def execute(self, requests):
        """ define actions """
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "input_text").as_numpy()
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("output__0", text)])
            )
        return responses

    def finalize(self):
        """ [optional] is called only once when the model is being unloaded """
        print('Cleaning up...', flush=True)
