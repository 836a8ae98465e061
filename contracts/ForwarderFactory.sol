// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./Forwarder.sol";

/// Deploys an option's Forwarder with CREATE2 (salt from the option id, recipient in the init
/// code), so its address is known before any code is there, and empties it in the same transaction.
contract ForwarderFactory {
    event ForwarderDeployed(address indexed forwarder, bytes32 indexed salt, address indexed recipient);

    function addressOf(bytes32 salt, address recipient) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(Forwarder).creationCode, abi.encode(recipient)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }

    function deploy(bytes32 salt, address recipient) public returns (address forwarder) {
        forwarder = address(new Forwarder{salt: salt}(recipient));
        emit ForwarderDeployed(forwarder, salt, recipient);
    }

    /// Deploys the forwarder if it is not there yet, then sends its whole balance of `token` to its recipient.
    function deployAndFlush(bytes32 salt, address recipient, address token) external returns (address forwarder) {
        forwarder = addressOf(salt, recipient);
        if (forwarder.code.length == 0) deploy(salt, recipient);
        Forwarder(forwarder).flush(token);
    }
}
